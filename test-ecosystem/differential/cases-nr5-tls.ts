/**
 * Node-RED 5's TLS and connection changes: the tls-config node's PKCS#12 (`certType: "pfx"`) and
 * environment-variable (`certType: "env"`) certificates, the http request node sending the
 * tls-config's SNI server name, and a websocket-client connecting only once a websocket in or out
 * uses it (the test checks the echo peer's connections after the cases). The HTTPS peer answers
 * with the handshake it saw: `{sni, client, authorized}` (network-peers.ts).
 */
import type { DiffCase, Kit } from './harness.js';

const tlsConfig = (k: Kit, props: Record<string, unknown>) => ({
  ...k.node('tls', 'tls-config', {
    cert: '', key: '', ca: '', certname: '', keyname: '', caname: '', servername: '', alpnprotocol: '', verifyservercert: false, ...props,
  }),
});

/** GET the handshake through the case's tls-config, then keep what the TLS layer decided. */
const handshake = (k: Kit) => [
  k.node('start', 'http request', {
    method: 'GET', ret: 'obj', paytoqs: 'ignore', url: '${DIFF_HTTPS_URL}', tls: k.id('tls'), persist: false,
    proxy: '', insecureHTTPParser: false, authType: '', senderr: false, headers: [],
  }, 'keep'),
  k.fn('keep', 'msg.payload = { status: msg.statusCode, handshake: msg.payload };\nfor (const k of ["statusCode", "headers", "responseUrl", "redirectList", "retry"]) delete msg[k];\nreturn msg;', 'out'),
];

export const nodeRed5TlsCases: DiffCase[] = [
  {
    name: 'tls-pfx-client-certificate', about: 'a tls-config with a PKCS#12 file and its passphrase presents that certificate to the server',
    build: (k) => [
      { ...tlsConfig(k, { certType: 'pfx', p12: '${DIFF_TLS_P12}', p12name: '' }), credentials: { passphrase: 'test-pass' } },
      ...handshake(k),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'tls-env-certificates', about: 'a tls-config reading certificate, key and CA from environment variables presents the certificate and verifies the server against that CA',
    build: (k) => [
      tlsConfig(k, { certType: 'env', certEnv: 'DIFF_TLS_CERT', keyEnv: 'DIFF_TLS_KEY', caEnv: 'DIFF_TLS_CA', verifyservercert: true }),
      ...handshake(k),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'http-request-sni', about: 'the http request node sends the tls-config\'s server name as SNI',
    build: (k) => [tlsConfig(k, { servername: 'diff.example' }), ...handshake(k)],
    requests: [{ msg: {} }],
  },
  {
    name: 'websocket-client-on-demand', about: 'a websocket-client with only a websocket out connects and sends; one nothing uses stays unconnected',
    build: (k) => [
      k.node('unused', 'websocket-client', { path: '${DIFF_WS_URL_UNUSED}', tls: '', wholemsg: 'false', hb: '0', subprotocol: '', headers: [] }),
      k.node('client', 'websocket-client', { path: '${DIFF_WS_URL_OUT_ONLY}', tls: '', wholemsg: 'false', hb: '0', subprotocol: '', headers: [] }),
      k.fn('start', 'return msg;', ['send', 'answer']),
      k.node('send', 'websocket out', { server: '', client: k.id('client') }),
      k.change('answer', [{ t: 'set', p: 'payload', pt: 'msg', to: 'sent', tot: 'str' }], 'out'),
    ],
    requests: [{ msg: { payload: 'hi' } }],
  },
];
