import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import selfsigned from 'selfsigned';
import { eventually, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { SettingsError } from '../../src/settings/settings.js';
import { send } from './support.js';

/**
 * Node-RED's `https`, `httpsRefreshInterval` and `requireHttps`: before,
 * Runnel ignored them and served the admin API, passwords included, in clear.
 */

interface Pems {
  private: string;
  cert: string;
  fingerprint: string;
}

/** `name` tells the certificates apart: a client trusting two self-signed ones looks them up by subject. */
function makeCert(name = 'localhost'): Promise<Pems> {
  return selfsigned.generate([{ name: 'commonName', value: name }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  }) as Promise<Pems>;
}

interface TlsReply {
  status: number;
  text: string;
  /** SHA-1 fingerprint of the certificate the server presented. */
  fingerprint: string;
}

/** One request on a fresh TLS connection, trusting only `ca`. */
function tlsGet(url: string, ca: string | string[]): Promise<TlsReply> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { ca, agent: false, timeout: 10_000 }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint.toLowerCase();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), fingerprint }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe('https', () => {
  let first: Pems;
  let second: Pems;
  before(async () => {
    [first, second] = await Promise.all([makeCert('first.localhost'), makeCert('second.localhost')]);
  });

  it('an object with key and cert as Buffers (fs.readFileSync) serves the admin API and http-in over TLS', async () => {
    const server = await startServer({ https: { key: Buffer.from(first.private), cert: Buffer.from(first.cert) } });
    try {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+\/$/);
      const r = await tlsGet(server.at('settings'), first.cert);
      assert.equal(r.status, 200);
      assert.equal(r.fingerprint, first.fingerprint);
      assert.ok(JSON.parse(r.text).httpNodeRoot);
      // Plain HTTP on the TLS port gets no answer in clear.
      await assert.rejects(send(server.at('settings').replace('https:', 'http:'), { timeoutMs: 5_000 }));
    } finally {
      await server.dispose();
    }
  });

  it('a function returning a promise of strings is called at start', async () => {
    let calls = 0;
    const server = await startServer({
      https: async () => {
        calls++;
        return { key: first.private, cert: first.cert };
      },
    });
    try {
      assert.equal(calls, 1);
      assert.equal((await tlsGet(server.at('settings'), first.cert)).status, 200);
    } finally {
      await server.dispose();
    }
  });

  it('httpsRefreshInterval swaps in a renewed certificate without a restart', async () => {
    let calls = 0;
    const server = await startServer({
      https: () => (++calls === 1 ? { key: first.private, cert: first.cert } : { key: second.private, cert: second.cert }),
      // Hours, as in Node-RED: about a second.
      httpsRefreshInterval: 0.0003,
    });
    try {
      assert.equal((await tlsGet(server.at('settings'), [first.cert, second.cert])).fingerprint, first.fingerprint);
      await eventually(async () => (await tlsGet(server.at('settings'), [first.cert, second.cert])).fingerprint === second.fingerprint, 30_000, 200);
      assert.ok(server.logs.some((l) => l.includes('https settings refreshed')));
    } finally {
      await server.dispose();
    }
  });

  it('a key that does not match its certificate, or a failing function, is one clear start error', async () => {
    // The command line prints a SettingsError's message as its one line (cli.test.ts, with a real process).
    const refusal = async (https: unknown, message: RegExp) => {
      const dir = await tempDir();
      try {
        const e = await startServer({ https }, dir).then(async (server) => {
          await server.stop();
          return new Error('started');
        }, (err: unknown) => err);
        assert.ok(e instanceof SettingsError, String(e));
        assert.doesNotMatch(e.message, /\n/);
        assert.match(e.message, message);
      } finally {
        await removeDir(dir);
      }
    };
    await refusal({ key: second.private, cert: first.cert }, /https: the key and certificate cannot be used/);
    await refusal(() => {
      throw new Error('no such file: server.key');
    }, /https: the settings function failed: no such file: server\.key/);
  });
});

describe('requireHttps', () => {
  let server: TestServer;
  before(async () => {
    // Plain HTTP behind a TLS-terminating proxy, Node-RED's use of the setting.
    server = await startServer({ requireHttps: true });
  });
  after(() => server?.dispose());

  it('redirects plain-HTTP GETs to the same URL over https on its default port (302, as Node-RED 5)', async () => {
    const r = await send(server.at('settings?x=1'));
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, `https://${new URL(server.url).hostname}/settings?x=1`);
    const v6 = await send(server.at('settings'), { headers: { host: '[::1]:1880' } });
    assert.equal(v6.headers.location, 'https://[::1]/settings');
  });

  it('redirects other methods with 308, which keeps the method and body', async () => {
    const r = await send(server.at('flows'), { method: 'POST', body: '[]', headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 308);
    assert.equal(r.headers.location, `https://${new URL(server.url).hostname}/flows`);
  });

  it('lets requests through that a TLS proxy forwarded (X-Forwarded-Proto: https)', async () => {
    const r = await send(server.at('settings'), { headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(r.status, 200);
  });

  it('refuses to build a redirect from a malformed Host header', async () => {
    const r = await send(server.at('settings'), { headers: { host: 'evil.example/path' } });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'invalid_request');
  });

  it('serves over https with requireHttps and a certificate', async () => {
    const cert = await makeCert();
    const secure = await startServer({ requireHttps: true, https: { key: cert.private, cert: cert.cert } });
    try {
      assert.equal((await tlsGet(secure.at('settings'), cert.cert)).status, 200);
    } finally {
      await secure.dispose();
    }
  });
});
