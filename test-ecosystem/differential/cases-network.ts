/**
 * The network palette against the peers of ./network-peers.ts. Both systems talk to the same
 * peers at once, so a case whose answer comes back as a new message (mqtt in, websocket in, udp
 * in) parks the HTTP request in flow context, tags what it sends with its own HTTP port, and
 * answers only with what carries its tag (the tag is replaced by PORT in the answer).
 */
import type { DiffCase, Kit } from './harness.js';
import { LISTENER_PATH } from './network-peers.js';

/** Parks req/res and sends a fresh message: payload, and topic `diff/<port>/<name>`. */
const STASH = (topicName: string) => `const me = String(msg.req.headers.host).split(':').pop();
flow.set('pending', { req: msg.req, res: msg.res });
flow.set('me', me);
return { payload: msg.payload, topic: 'diff/' + me + '/${topicName}' };`;

/** Answers the parked request with a message that carries this system's tag in \`field\` (null: any message). */
const UNSTASH = (field: string | null, strip: string) => `const me = flow.get('me');
const pending = flow.get('pending');
const tagged = ${field === null ? 'true' : `typeof msg.${field} === 'string' && msg.${field}.includes(me)`};
if (!pending || !tagged) return null;
flow.set('pending', null);
for (const k of ['topic', '_topic', 'payload']) if (typeof msg[k] === 'string') msg[k] = msg[k].split(me).join('PORT');
${strip}
msg.req = pending.req;
msg.res = pending.res;
return msg;`;

const broker = (k: Kit) => k.node('broker', 'mqtt-broker', {
  broker: '127.0.0.1', port: '${DIFF_MQTT_PORT}', clientid: '', autoConnect: true, usetls: false, protocolVersion: '4', keepalive: '60',
  cleansession: true, autoUnsubscribe: true, birthTopic: '', closeTopic: '', willTopic: '',
});

const mqttCase = (name: string, datatype: string, about: string, payloads: unknown[]): DiffCase => ({
  name, about,
  build: (k) => [
    broker(k),
    k.fn('start', STASH(name), 'pub'),
    k.node('pub', 'mqtt out', { topic: '', qos: '1', retain: 'false', respTopic: '', contentType: '', userProps: '', correl: '', expiry: '', broker: k.id('broker') }),
    k.node('sub', 'mqtt in', { topic: `diff/+/${name}`, qos: '1', datatype, broker: k.id('broker'), nl: false, rap: true, rh: 0, inputs: 0 }, 'back'),
    k.fn('back', UNSTASH('topic', ''), 'out'),
  ],
  requests: payloads.map((payload) => ({ msg: { payload } })),
});

export const networkCases: DiffCase[] = [
  mqttCase('net-mqtt-auto', 'auto-detect', 'mqtt out → broker → mqtt in (auto-detect): JSON text comes back parsed, other text as a string; topic, qos, retain, _topic', [{ a: 1 }, 'plain', 42]),
  mqttCase('net-mqtt-utf8', 'utf8', 'mqtt in with the utf8 data type keeps JSON as text', [{ a: [1, 2] }]),
  mqttCase('net-mqtt-buffer', 'buffer', 'mqtt in with the buffer data type sends a Buffer', ['bytes']),
  {
    name: 'net-tcp-request-char', about: 'tcp request to an echo peer, answer split at a newline as a string; the reply is a copy of the request message',
    build: (k) => [k.node('start', 'tcp request', { server: '127.0.0.1', port: '${DIFF_TCP_PORT}', out: 'char', ret: 'string', splitc: '\\n', newline: '', trim: false, tls: '' }, 'out')],
    requests: [{ msg: { payload: 'hello', topic: 'kept' } }, { msg: { payload: 7 } }],
  },
  {
    name: 'net-tcp-request-count', about: 'tcp request in count mode answers a Buffer of that many bytes',
    build: (k) => [k.node('start', 'tcp request', { server: '127.0.0.1', port: '${DIFF_TCP_PORT}', out: 'count', ret: 'buffer', splitc: '6', newline: '', trim: false, tls: '' }, 'out')],
    requests: [{ msg: { payload: 'abcdef' } }],
  },
  {
    // Each system has its own connection to the peer, so no tag is needed.
    name: 'net-websocket-client', about: 'websocket out → echo peer → websocket in on one websocket-client: payload text and _session shape',
    build: (k) => [
      k.node('client', 'websocket-client', { path: '${DIFF_WS_URL}', tls: '', wholemsg: 'false', hb: '0', subprotocol: '', headers: [] }),
      k.fn('start', STASH('ws'), 'send'),
      k.node('send', 'websocket out', { server: '', client: k.id('client') }),
      k.node('recv', 'websocket in', { server: '', client: k.id('client') }, 'back'),
      k.fn('back', UNSTASH(null, "msg.session = typeof msg._session === 'object' ? Object.keys(msg._session).sort().join(',') + ':' + msg._session.type : 'none';\ndelete msg._session;"), 'out'),
    ],
    requests: [{ msg: { payload: 'hi' } }, { msg: { payload: { a: 1 } } }],
  },
  {
    // The peer holds one connection to each system's listener, so no tag is needed either.
    name: 'net-websocket-listener', about: 'websocket out on a websocket-listener broadcasts to its clients; what a client sends comes through websocket in with a websocket _session',
    build: (k) => [
      k.node('listener', 'websocket-listener', { path: LISTENER_PATH, wholemsg: 'false' }),
      k.fn('start', STASH('wsl'), 'send'),
      k.node('send', 'websocket out', { server: k.id('listener'), client: '' }),
      k.node('recv', 'websocket in', { server: k.id('listener'), client: '' }, 'back'),
      k.fn('back', UNSTASH(null, "msg.session = typeof msg._session === 'object' ? Object.keys(msg._session).sort().join(',') + ':' + msg._session.type : 'none';\ndelete msg._session;"), 'out'),
    ],
    requests: [{ msg: { payload: 'hi' } }, { msg: { payload: { a: 1 } } }, { msg: { payload: 7 } }],
  },
  {
    name: 'net-udp-roundtrip', about: 'udp out to a peer, its broadcast answer through udp in (utf8): payload, fromip, ip and port',
    build: (k) => [
      k.fn('start', `${STASH('udp')}`.replace("return { payload: msg.payload,", "return { payload: me + '|' + msg.payload,"), 'send'),
      k.node('send', 'udp out', { addr: '127.0.0.1', iface: '', port: '${DIFF_UDP_PEER}', ipv: 'udp4', outport: '', base64: false, multicast: 'false' }),
      k.node('recv', 'udp in', { iface: '', port: '${DIFF_UDP_PORT}', ipv: 'udp4', multicast: 'false', group: '', datatype: 'utf8' }, 'back'),
      k.fn('back', UNSTASH('payload', ''), 'out'),
    ],
    requests: [{ msg: { payload: 'ping' } }],
  },
];
