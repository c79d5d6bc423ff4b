import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Blob } from 'node:buffer';
import net from 'node:net';
import { once } from 'node:events';
import { request } from '../helpers/server.js';
import { type Conf, flowSuite } from './flow.js';
import { deploy } from '../helpers/deploy.js';

const node = (id: string, type: string, extra: Conf = {}, wires: string[] = []): Conf => ({
  id, type, z: 't1', x: 100, y: 100, wires: [wires], ...extra,
});
/** An http in whose messages are recorded under `id`, then answered with `{ok: true}`. */
const route = (id: string, method: string, url: string, options: Conf = {}): Conf[] => [
  node(`in-${id}`, 'http in', { method, url, upload: false, skipBodyParsing: false, ...options }, [`cap-${id}`]),
  node(`cap-${id}`, 'test-capture', { name: id, passthrough: true }, [`ok-${id}`]),
  // A new message answers, leaving the recorded one as the flow received it.
  node(`ok-${id}`, 'function', { func: 'return { res: msg.res, payload: { ok: true } };', outputs: 1 }, ['out']),
];

function flows(raw = true): Conf[] {
  return [
    { id: 't1', type: 'tab', label: 'uploads' },
    ...route('up', 'post', '/up', { upload: true }),
    ...route('plain', 'post', '/plain'),
    ...route('put-up', 'put', '/put-up', { upload: true }),
    ...route('raw', 'post', '/raw/:id', { skipBodyParsing: raw }),
    ...route('raw-get', 'get', '/raw-get', { skipBodyParsing: raw }),
    node('out', 'http response', { statusCode: '', headers: {} }),
  ];
}

/** Objects as multer builds them: no prototype, all the way down. */
function bare(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(bare);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(value)) out[k] = bare(v);
  return out;
}

const BOUNDARY = 'testBoundary42';

function multipartText(fields: [string, string][]): string {
  return fields.map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') + `--${BOUNDARY}--\r\n`;
}

describe('http in: upload and skipBodyParsing', () => {
  const t = flowSuite(() => flows(), { apiMaxLength: 2 * 1024 * 1024 });

  /** Sends a request and returns the answer with the message the flow received, if any. */
  async function send(name: string, path: string, init: RequestInit) {
    const seen = t.capture.of(name).length;
    const res = await request(t.server.at(path), init);
    const msg = res.status === 200 ? (await t.capture.waitFor(name, seen + 1))[seen] : undefined;
    if (res.status !== 200) assert.equal(t.capture.of(name).length, seen, 'a refused request reaches no flow');
    return { res, msg };
  }

  test('upload: text fields nest into msg.payload and files arrive in msg.req.files from memory', async () => {
    const form = new FormData();
    form.append('title', 'Report');
    form.append('meta[owner]', 'ada');
    form.append('tags[]', 'x');
    form.append('tags[]', 'y');
    form.append('photo', new Blob([Buffer.from([0, 1, 2, 255])], { type: 'image/png' }), 'pic.png');
    form.append('notes', new Blob(['hello'], { type: 'text/plain' }), 'a "b".txt');
    const { res, msg } = await send('up', 'up', { method: 'POST', body: form });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true });
    assert.deepEqual(msg!.payload, bare({ title: 'Report', meta: { owner: 'ada' }, tags: ['x', 'y'] }));
    assert.equal(msg!.req.body, msg!.payload);
    assert.deepEqual(msg!.req.files, [
      { fieldname: 'photo', originalname: 'pic.png', encoding: '7bit', mimetype: 'image/png', buffer: Buffer.from([0, 1, 2, 255]), size: 4 },
      { fieldname: 'notes', originalname: 'a "b".txt', encoding: '7bit', mimetype: 'text/plain', buffer: Buffer.from('hello'), size: 5 },
    ]);
  });

  test('upload: a JSON body is parsed as usual and a text body leaves {}, with no msg.req.files', async () => {
    const json = await send('up', 'up', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    assert.deepEqual(json.msg!.payload, { a: 1 });
    assert.equal(json.msg!.req.files, undefined);
    const text = await send('up', 'up', { method: 'POST', body: 'words', headers: { 'content-type': 'text/plain' } });
    assert.deepEqual(text.msg!.payload, {});
  });

  test('without upload, or on a route that is not POST, a multipart body is its raw bytes', async () => {
    const body = multipartText([['a', '1']]);
    const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
    for (const [name, method] of [['plain', 'POST'], ['put-up', 'PUT']]) {
      const { msg } = await send(name, name, { method, body, headers });
      assert.deepEqual(msg!.payload, Buffer.from(body), name);
      assert.equal(msg!.req.files, undefined, name);
    }
  });

  test('a request over apiMaxLength is 413 JSON, and uploads keep working after it', async () => {
    const form = new FormData();
    form.append('big', new Blob([Buffer.alloc(2 * 1024 * 1024 + 1, 7)]), 'big.bin');
    const { res } = await send('up', 'up', { method: 'POST', body: form });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { code: 'payload_too_large', message: 'Request body is too large' });
    const small = new FormData();
    small.append('after', 'yes');
    const ok = await send('up', 'up', { method: 'POST', body: small });
    assert.deepEqual(ok.msg!.payload, bare({ after: 'yes' }));
  });

  test('an upload refused with 413 before it is sent is read to its end: the client sees the answer and keeps its connection', async () => {
    // Closing at once reset the connection under the still-sending client; Node 26's fetch then
    // reported its failed write (EPIPE) instead of the 413. A raw socket sees the reset on any Node.
    const size = 32 * 1024 * 1024;
    const socket = net.connect(Number(new URL(t.server.url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d));
    const failed = once(socket, 'error').then(([e]) => e as Error);
    const until = (answer: RegExp) => new Promise<void>((resolve) => {
      const check = () => (answer.test(text) ? resolve() : socket.once('data', check));
      check();
    });
    socket.write(`POST ${new URL(t.server.at('up')).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${size}\r\n\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    for (let sent = 0; sent < size; sent += chunk.length) {
      const written = new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
      const outcome = await Promise.race([written, failed]);
      assert.equal(outcome, undefined, `the server reset the connection after ${sent} bytes: ${String(outcome)}`);
    }
    await until(/\}$/);
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.ok(text.endsWith(JSON.stringify({ code: 'payload_too_large', message: 'Request body is too large' })), text);
    const small = multipartText([['again', 'yes']]);
    const seen = t.capture.of('up').length;
    socket.write(`POST ${new URL(t.server.at('up')).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${Buffer.byteLength(small)}\r\n\r\n${small}`);
    await until(/\}HTTP\/1\.1 [^]*\}$/);
    socket.destroy();
    assert.match(text.slice(text.lastIndexOf('HTTP/1.1 ')), /^HTTP\/1\.1 200 [^]*\{"ok":true\}$/);
    assert.deepEqual((await t.capture.waitFor('up', seen + 1))[seen].payload, bare({ again: 'yes' }));
  });

  test('the rest of a refused upload is read for a bounded time: a client that never stops sending is disconnected', async () => {
    const socket = net.connect(Number(new URL(t.server.url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d));
    // The server ends the drain with a reset (ECONNRESET here): expected, the close is what counts.
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(`POST ${new URL(t.server.at('up')).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${1024 ** 4}\r\n\r\n`);
    const chunk = Buffer.alloc(256 * 1024, 7);
    const pump = () => {
      while (!socket.destroyed && socket.write(chunk));
      if (!socket.destroyed) socket.once('drain', pump);
    };
    pump();
    let gaveUp = false;
    const bound = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, 60_000);
    await closed;
    clearTimeout(bound);
    assert.equal(gaveUp, false, 'the server still read the upload after 60 s');
    assert.match(text, /^HTTP\/1\.1 413 /);
  });

  test('a text field over 1 MiB is 413, as multer refuses it', async () => {
    const form = new FormData();
    form.append('long', 'x'.repeat(1024 * 1024 + 1));
    const { res } = await send('up', 'up', { method: 'POST', body: form });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { code: 'payload_too_large', message: 'Form field "long" is longer than 1 MiB' });
  });

  test('more than 1,000 fields and files in one form is 413, so a small body cannot build huge objects', async () => {
    const form = new FormData();
    for (let i = 0; i <= 1000; i++) form.append(`a${i}[9999]`, 'x');
    const { res } = await send('up', 'up', { method: 'POST', body: form });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { code: 'payload_too_large', message: 'A form may have at most 1000 fields and files' });
  });

  test('malformed multipart bodies are 400 JSON naming the problem', async () => {
    const cases: [string, string, string][] = [
      ['multipart/form-data', multipartText([['a', '1']]), 'Multipart: Boundary not found'],
      [`multipart/form-data; boundary=${BOUNDARY}`, `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\ncut`, 'Unexpected end of multipart data'],
      [`multipart/form-data; boundary=${BOUNDARY}`, '', 'Unexpected end of multipart data'],
      // Cut off inside a file, kept or dropped: the file's stream fails too, and must not take the process down.
      [`multipart/form-data; boundary=${BOUNDARY}`, `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\npart`, 'Unexpected end of multipart data'],
      [`multipart/form-data; boundary=${BOUNDARY}`, `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"\r\nContent-Type: application/octet-stream\r\n\r\npart`, 'Unexpected end of multipart data'],
      [`multipart/mixed; boundary=${BOUNDARY}`, multipartText([['a', '1']]), 'Unsupported Content-Type.'],
      [`multipart/form-data; boundary=${BOUNDARY}`, `--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${BOUNDARY}--\r\n`, 'a field has no name'],
    ];
    for (const [type, body, reason] of cases) {
      const { res } = await send('up', 'up', { method: 'POST', body, headers: { 'content-type': type } });
      assert.equal(res.status, 400, `${type} ${JSON.stringify(body)}`);
      assert.deepEqual(res.body, { code: 'invalid_multipart', message: `Malformed multipart body: ${reason}` });
    }
    const huge = multipartText([['a[10001]', 'x']]);
    const { res } = await send('up', 'up', { method: 'POST', body: huge, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { code: 'invalid_multipart', message: 'Form field "a[10001]" has an array index over 10000' });
  });

  test('skipBodyParsing: the body is a Buffer of the bytes sent, even when it is not valid JSON', async () => {
    for (const body of ['{"a":1}', '{not json']) {
      const { res, msg } = await send('raw', 'raw/7', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 200);
      assert.deepEqual(msg!.payload, Buffer.from(body));
      assert.equal(msg!.req.body, msg!.payload);
      assert.equal(msg!.req.params.id, '7');
    }
    const empty = await send('raw', 'raw/8', { method: 'POST' });
    assert.deepEqual(empty.msg!.payload, Buffer.alloc(0));
  });

  test('skipBodyParsing on GET: the payload is still the query, msg.req.body an empty Buffer', async () => {
    const { msg } = await send('raw-get', 'raw-get?q=1', { method: 'GET' });
    assert.deepEqual(msg!.payload, { q: '1' });
    assert.deepEqual(msg!.req.body, Buffer.alloc(0));
  });

  test('redeploying without skipBodyParsing parses bodies again', async () => {
    await deploy(t.server, flows(false));
    const { msg } = await send('raw', 'raw/9', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    assert.deepEqual(msg!.payload, { a: 1 });
    const bad = await send('raw', 'raw/9', { method: 'POST', body: '{not json', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.res.status, 400);
    await deploy(t.server, flows());
  });
});
