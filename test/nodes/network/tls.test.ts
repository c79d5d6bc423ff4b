import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { startServer, type TestServer } from '../../helpers/server.js';
import { TLS_DIR } from '../../helpers/mqtt.js';
import { deploy } from '../../helpers/deploy.js';
import type { TlsConfigNode } from '../../../src/nodes/network/tls/tls.js';

const P12 = path.join(TLS_DIR, 'server.p12');
const PEM = (name: string) => readFileSync(path.join(TLS_DIR, name), 'utf8');

/** Serves TLS with the options a tls-config node gives, and connects as a client that trusts only the test CA. */
async function handshake(options: tls.TlsOptions): Promise<boolean> {
  const server = tls.createServer(options, (socket) => socket.end('hi'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const client = tls.connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', ca: PEM('ca.crt') });
    await once(client, 'secureConnect');
    const authorized = client.authorized;
    client.destroy();
    return authorized;
  } finally {
    server.close();
  }
}

describe("tls-config's Node-RED 5 certificate forms", () => {
  let server: TestServer;
  const saved = { cert: process.env.RUNNEL_TEST_TLS_CERT, key: process.env.RUNNEL_TEST_TLS_KEY };
  const tlsNode = (id: string) => server.instance.runtime.services.nodes.get(id) as unknown as TlsConfigNode;

  before(async () => {
    process.env.RUNNEL_TEST_TLS_CERT = PEM('server.crt');
    process.env.RUNNEL_TEST_TLS_KEY = PEM('server.key');
    server = await startServer();
    await deploy(server, [
      { id: 't1', type: 'tab', label: 'tls' },
      { id: 'pfx-file', type: 'tls-config', certType: 'pfx', p12: P12, credentials: { passphrase: 'test-pass' } },
      { id: 'pfx-upload', type: 'tls-config', certType: 'pfx', p12: '', credentials: { p12data: readFileSync(P12).toString('base64'), passphrase: 'test-pass' } },
      { id: 'env', type: 'tls-config', certType: 'env', certEnv: 'RUNNEL_TEST_TLS_CERT', keyEnv: 'RUNNEL_TEST_TLS_KEY' },
      { id: 'env-unset', type: 'tls-config', certType: 'env', certEnv: 'RUNNEL_TEST_TLS_NOT_SET', keyEnv: 'RUNNEL_TEST_TLS_KEY' },
    ]);
  });
  after(async () => {
    await server.dispose();
    for (const [k, v] of [['RUNNEL_TEST_TLS_CERT', saved.cert], ['RUNNEL_TEST_TLS_KEY', saved.key]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test('a .p12 file by path, with its passphrase, serves TLS', async () => {
    const opts = tlsNode('pfx-file').addTLSOptions({});
    assert.ok(Buffer.isBuffer(opts.pfx));
    assert.equal(opts.cert, undefined);
    assert.equal(await handshake(opts as tls.TlsOptions), true);
  });

  test('an uploaded .p12 (base64 in the credentials) serves TLS', async () => {
    assert.equal(await handshake(tlsNode('pfx-upload').addTLSOptions({}) as tls.TlsOptions), true);
  });

  test('certificate and key from environment variables serve TLS', async () => {
    const opts = tlsNode('env').addTLSOptions({});
    assert.equal(String(opts.cert), PEM('server.crt'));
    assert.equal(await handshake(opts as tls.TlsOptions), true);
  });

  test('a named environment variable that is not set makes the node invalid, with an error naming it', () => {
    assert.equal(tlsNode('env-unset').valid, false);
    assert.ok(server.logs.some((l) => l.includes('The environment variable RUNNEL_TEST_TLS_NOT_SET (cert) is not set')), server.logs.join('\n'));
  });
});
