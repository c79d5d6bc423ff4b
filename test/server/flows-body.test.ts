import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { startServer, login, adminAuth, type TestServer } from '../helpers/server.js';
import { chooseCoding, matchesEtag } from '../../src/server/flows-body.js';
import { deploy } from '../helpers/deploy.js';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

/** A GET that neither adds nor undoes a content-coding, so the test sees the bytes on the wire. */
function rawGet(url: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

const bigFlows = () => [
  { id: 't1', type: 'tab', label: 'big' },
  ...Array.from({ length: 200 }, (_, i) => ({ id: `c${i}`, type: 'comment', z: 't1', name: `note ${i}`, x: 10, y: 10 * i, wires: [] })),
];

describe('GET /flows as a cacheable, compressible representation', () => {
  let server: TestServer;
  let token: string;
  let auth: Record<string, string>;
  const v2 = { 'Node-RED-API-Version': 'v2' };

  before(async () => {
    server = await startServer({ adminAuth: adminAuth() });
    token = await login(server);
    auth = { authorization: `Bearer ${token}` };
    await deploy(server, bigFlows(), { token });
  });
  after(() => server.dispose());

  test('the ETag is the rev; If-None-Match with it answers 304 with no body', async () => {
    const first = await rawGet(server.at('flows'), { ...auth, ...v2 });
    assert.equal(first.status, 200);
    const { rev } = JSON.parse(first.bytes.toString()) as { rev: string };
    assert.equal(first.headers.etag, `"${rev}"`);
    assert.equal(first.headers['cache-control'], 'no-store');
    const again = await rawGet(server.at('flows'), { ...auth, ...v2, 'if-none-match': `"${rev}"` });
    assert.equal(again.status, 304);
    assert.equal(again.bytes.length, 0);
    assert.equal(again.headers.etag, `"${rev}"`);
  });

  test('v1 and v2 bodies of one rev have different tags', async () => {
    const v1 = await rawGet(server.at('flows'), auth);
    const two = await rawGet(server.at('flows'), { ...auth, ...v2 });
    assert.notEqual(v1.headers.etag, two.headers.etag);
    const crossed = await rawGet(server.at('flows'), { ...auth, 'if-none-match': String(two.headers.etag) });
    assert.equal(crossed.status, 200, 'a v2 tag does not validate the v1 body');
  });

  test('after a deploy the old tag no longer matches', async () => {
    const before = await rawGet(server.at('flows'), { ...auth, ...v2 });
    const flows = bigFlows();
    flows.push({ id: 'extra', type: 'comment', z: 't1', name: 'extra', x: 1, y: 1, wires: [] });
    await deploy(server, flows, { token });
    const after = await rawGet(server.at('flows'), { ...auth, ...v2, 'if-none-match': String(before.headers.etag) });
    assert.equal(after.status, 200);
    assert.notEqual(after.headers.etag, before.headers.etag);
  });

  test('gzip and brotli bodies decode to the same document; their tags still validate', async () => {
    const plain = await rawGet(server.at('flows'), { ...auth, ...v2 });
    for (const [accept, coding, decode] of [
      ['gzip', 'gzip', zlib.gunzipSync],
      ['gzip;q=0.5, br', 'br', zlib.brotliDecompressSync],
    ] as const) {
      const r = await rawGet(server.at('flows'), { ...auth, ...v2, 'accept-encoding': accept });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], coding);
      assert.match(String(r.headers.vary), /Accept-Encoding/);
      assert.ok(r.bytes.length < plain.bytes.length / 3, `${coding}: ${r.bytes.length} of ${plain.bytes.length} bytes`);
      assert.deepEqual(decode(r.bytes), plain.bytes);
      const revalidated = await rawGet(server.at('flows'), { ...auth, ...v2, 'accept-encoding': accept, 'if-none-match': String(r.headers.etag) });
      assert.equal(revalidated.status, 304);
    }
  });

  test('without a token there is no body and no tag to learn from', async () => {
    const r = await rawGet(server.at('flows'), v2);
    assert.equal(r.status, 401);
    assert.equal(r.headers.etag, undefined);
  });
});

describe('content negotiation rules', () => {
  test('chooseCoding follows q-values, prefers brotli among equals, honours q=0 and *', () => {
    assert.equal(chooseCoding(undefined), undefined);
    assert.equal(chooseCoding('identity'), undefined);
    assert.equal(chooseCoding('gzip, deflate, br'), 'br');
    assert.equal(chooseCoding('br;q=0.2, gzip;q=0.8'), 'gzip');
    assert.equal(chooseCoding('br;q=0, gzip'), 'gzip');
    assert.equal(chooseCoding('*'), 'br');
    assert.equal(chooseCoding('*;q=0'), undefined);
    assert.equal(chooseCoding('gzip;q=nonsense'), undefined);
  });

  test('matchesEtag compares weakly and ignores the coding suffix', () => {
    assert.ok(matchesEtag('"abc"', '"abc"'));
    assert.ok(matchesEtag('W/"abc"', '"abc"'));
    assert.ok(matchesEtag('"x", "abc-gzip"', '"abc"'));
    assert.ok(matchesEtag('*', '"abc"'));
    assert.ok(!matchesEtag('"abcd"', '"abc"'));
    assert.ok(!matchesEtag(undefined, '"abc"'));
  });
});
