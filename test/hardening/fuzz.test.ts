import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import net from 'node:net';
import { login, request, startServer, type TestServer } from '../helpers/server.js';
import { adminAuth } from '../helpers/users.js';
import { deploy } from '../helpers/deploy.js';

/**
 * Property-based fuzzing of every admin route (issue 6 §1): random methods, paths, version and
 * deployment-type headers, content types, auth, and bodies (random JSON, deep nesting, huge
 * strings, wrong types in every deploy field, forms, multipart). Requests go out in concurrent
 * batches over keep-alive. Invariants: no 5xx, every error is a JSON object in one of the two
 * documented shapes, nothing hangs, the server still answers, and the active flows change only
 * when a deploy succeeded.
 */
const BATCH = 8;
const RUNS = Number(process.env.RUNNEL_FUZZ_BATCHES ?? 1300);
const TIMEOUT_MS = 5_000;

let server: TestServer;
let token: string;
before(async () => {
  server = await startServer({
    adminAuth: adminAuth(),
    apiMaxLength: '256kb',
    loginThrottle: { maxFailures: 1_000_000 },
    // Installs reach their validation and the allow-list check, never npm.
    externalModules: { palette: { allowInstall: true, allowUpload: true, allowLocalPaths: false, denyList: ['*'], maxUploadSize: '64kb' } },
    logging: { level: 'fatal' },
    // Random paths off the API are http-in paths on this shared root, which answer Express's HTML
    // 404 by default; this suite holds every answer to the API's JSON shape.
    httpNodeNotFound: 'json',
  });
  token = await login(server);
});
after(() => server.dispose());

const ascii = (maxLength = 40) => fc.string({ unit: 'grapheme-ascii', maxLength });
const anything = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined));
const deepJson = fc.integer({ min: 100, max: 20_000 }).map((depth) => `{"flows":${'['.repeat(depth)}${']'.repeat(depth)}}`);
const deepNode = fc.integer({ min: 1_000, max: 20_000 }).map(
  (depth) => `[{"id":"t","type":"tab"},{"id":"n","type":"comment","z":"t","x":1,"y":1,"wires":[],"info":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}]`,
);
const deepCredentials = fc.integer({ min: 1_000, max: 20_000 }).map(
  (depth) => `{"flows":[{"id":"t","type":"tab"},{"id":"n","type":"comment","z":"t","x":1,"y":1,"wires":[]}],"credentials":{"n":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}`,
);
const nodeType = fc.oneof(fc.constantFrom('tab', 'comment', 'junction', 'function', 'change', 'switch', 'inject', 'http in', 'link in', 'subflow', 'no-such-type'), ascii(10), anything);
const flowNode = fc.record(
  { id: fc.oneof(ascii(6), anything), type: nodeType, z: fc.oneof(fc.constant('t'), anything), x: anything, y: anything, wires: anything, credentials: anything, func: anything, rules: anything, name: anything },
  { requiredKeys: [] },
);
const flowsArray = fc.array(fc.oneof(flowNode, anything), { maxLength: 6 });
const v2Body = fc.record({ flows: fc.oneof(flowsArray, anything), rev: fc.oneof(ascii(64), anything), credentials: anything }, { requiredKeys: [] });
const formBody = fc.array(fc.tuple(ascii(12), ascii(30)), { maxLength: 8 }).map((pairs) => new URLSearchParams(pairs).toString());
const multipart = fc.record({ field: fc.constantFrom('tarball', 'file', ''), content: fc.uint8Array({ maxLength: 2048 }), name: ascii(20), extraPart: fc.boolean() }).map(
  ({ field, content, name, extraPart }) => {
    const b = '----fuzzboundary';
    const parts = [Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="${field}"; filename="${name.replace(/["\r\n]/g, '')}"\r\nContent-Type: application/gzip\r\n\r\n`), Buffer.from(content)];
    if (extraPart) parts.push(Buffer.from(`\r\n--${b}\r\nContent-Disposition: form-data; name="x"\r\n\r\nvalue`));
    parts.push(Buffer.from(`\r\n--${b}--\r\n`));
    return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${b}` };
  },
);
const body = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  v2Body.map((v) => JSON.stringify(v)),
  flowsArray.map((v) => JSON.stringify(v)),
  fc.record({ module: anything, version: anything, enabled: anything, token: anything }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  deepJson,
  deepNode,
  fc.integer({ min: 1, max: 400_000 }).map((n) => JSON.stringify({ module: 'x'.repeat(n) })),
  ascii(200),
  formBody,
  multipart,
);
const path = fc.oneof(
  fc.constantFrom(
    'auth/login', 'auth/token', 'auth/revoke', 'settings', 'flows', 'flows/state', 'nodes', 'nodes/node-red',
    'nodes/node-red/inject', 'nodes/@scope/mod', 'nodes/@scope/mod/set', 'nodes/..%2F..%2Fetc', 'nodes/%ZZ', 'nodes/-rf',
    'credentials/comment/n', 'credentials/a/b/c', 'flows/../settings', `nodes/${'a'.repeat(600)}`,
  ),
  fc.array(ascii(12).map(encodeURIComponent), { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/')),
);
const header = (values: string[]) => fc.oneof(fc.constantFrom(...values), ascii(20), fc.constant(undefined));
const fuzzRequest = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
  path,
  version: header(['v1', 'v2', 'v3', '']),
  deployment: header(['full', 'nodes', 'flows', 'reload', 'partial']),
  contentType: header(['application/json', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream']),
  auth: fc.constantFrom('valid', 'none', 'garbage', 'basic', 'truncated'),
  body,
});
type FuzzRequest = typeof fuzzRequest extends fc.Arbitrary<infer T> ? T : never;

function headersFor(r: FuzzRequest): Record<string, string> {
  const h: Record<string, string> = {};
  if (r.version !== undefined) h['runtime-api-version'] = r.version;
  if (r.deployment !== undefined) h['node-red-deployment-type'] = r.deployment;
  if (typeof r.body === 'object' && r.body) h['content-type'] = r.body.type;
  else if (r.contentType !== undefined) h['content-type'] = r.contentType;
  if (r.auth === 'valid') h.authorization = `Bearer ${token}`;
  if (r.auth === 'garbage') h.authorization = 'Bearer not-a-real-token';
  if (r.auth === 'basic') h.authorization = 'Basic YWRtaW46YWRtaW4=';
  if (r.auth === 'truncated') h.authorization = `Bearer ${token.slice(0, -3)}`;
  return h;
}

let sent = 0;
let deploys = 0;
async function send(r: FuzzRequest): Promise<{ deployed: boolean }> {
  const init: RequestInit = { method: r.method, headers: headersFor(r), signal: AbortSignal.timeout(TIMEOUT_MS) };
  if (r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD') init.body = typeof r.body === 'string' ? r.body : r.body.body;
  // Concatenated, not resolved: a path starting with '//' must stay a path, not become a host.
  const url = server.url + r.path;
  const shown = typeof r.body === 'string' ? `${r.body.length} bytes ${JSON.stringify(r.body.slice(0, 300))}` : r.body ? `multipart ${r.body.body.length} bytes` : 'no body';
  const what = (outcome: string) => `${r.method} /${r.path.slice(0, 80)} ${JSON.stringify(headersFor(r))} (${shown}) → ${outcome}`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, init);
    text = await res.text();
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(what(`${(e as Error).message}: ${cause?.code ?? ''} ${cause?.message ?? ''}`));
  }
  sent++;
  const outcome = what(`${res.status} ${text.slice(0, 200)}`);
  assert.ok(res.status < 500, outcome);
  if (res.status >= 400 && r.method !== 'HEAD') {
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, outcome);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const shaped =
      (typeof parsed.code === 'string' && typeof parsed.message === 'string') ||
      (typeof parsed.error === 'string' && typeof parsed.error_description === 'string');
    assert.ok(shaped, outcome);
  }
  const deployed = r.method === 'POST' && /^flows\/?$/.test(r.path) && res.status < 300;
  return { deployed };
}

async function activeRev(): Promise<string> {
  const res = await request(server.at('flows'), { headers: { 'runtime-api-version': 'v2' }, token });
  assert.equal(res.status, 200);
  return res.body.rev as string;
}

/** Runs `runs` concurrent batches of `arb` requests, checking the active flows after each batch. */
async function fuzz(arb: fc.Arbitrary<FuzzRequest>, runs: number, seedOffset: number): Promise<void> {
  let rev = await activeRev();
  const seed = process.env.RUNNEL_FUZZ_SEED ? Number(process.env.RUNNEL_FUZZ_SEED) + seedOffset : undefined;
  const details = await fc.check(
    fc.asyncProperty(fc.array(arb, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
      const results = await Promise.all(batch.map(send));
      deploys += results.filter((r) => r.deployed).length;
      const now = await activeRev();
      if (!results.some((r) => r.deployed)) assert.equal(now, rev, 'the active flows changed although no deploy succeeded');
      rev = now;
    }),
    { numRuns: runs, endOnFailure: true, seed },
  );
  // The counterexample can be megabytes of JSON: report what broke and how to replay it.
  if (details.failed) assert.fail(`${String((details.errorInstance as Error)?.message).slice(0, 2000)} (replay: RUNNEL_FUZZ_SEED=${details.seed - seedOffset}, path ${details.counterexamplePath})`);
}

/** Authorised JSON deploys only, so most requests get past the guard and the parser into validation and the runtime. */
const deployRequest = fc.record({
  method: fc.constant('POST'),
  path: fc.constant('flows'),
  version: header(['v1', 'v2']),
  deployment: header(['full', 'nodes', 'flows', 'reload']),
  contentType: fc.constant('application/json'),
  auth: fc.constant('valid'),
  body: fc.oneof(v2Body.map((v) => JSON.stringify(v)), flowsArray.map((v) => JSON.stringify(v)), deepJson, deepNode, deepCredentials),
});

// The file's time bounds catch a hung server, not a slow one: a loaded 2-core machine needs minutes (TIMEOUT_MS bounds each request).
test('fuzzing every admin route: no 5xx, JSON errors, no hangs, config changes only on success', { timeout: 900_000 }, async () => {
  await fuzz(fuzzRequest, Math.ceil(RUNS * 0.75), 0);
  await fuzz(deployRequest, Math.ceil(RUNS * 0.25), 1);
  assert.ok(sent >= RUNS * BATCH);
  const alive = await request(server.at('auth/login'), { signal: AbortSignal.timeout(TIMEOUT_MS) });
  assert.equal(alive.status, 200);
  assert.deepEqual(alive.body, { type: 'credentials', prompts: [{ id: 'username', type: 'text', label: 'user.username' }, { id: 'password', type: 'password', label: 'user.password' }] });
  console.log(`fuzzed ${sent} requests, ${deploys} of them successful deploys`);
});

/**
 * Raw request streams (issue 12): malformed request lines and headers, conflicting lengths,
 * broken chunked encoding, pipelined requests and input trickled in pieces, against admin and
 * http-in routes. Invariants: no 5xx on the wire, every connection is answered or closed soon
 * after the client stops sending (no hang), and the server still answers afterwards.
 */
const STREAM_RUNS = Number(process.env.RUNNEL_FUZZ_STREAMS ?? 150);
const crlf = '\r\n';
const methodToken = () => fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE', 'G ET', 'get', 'PRI', '');
const target = fc.oneof(
  fc.constantFrom('/flows', '/auth/token', '/settings', '/nodes', '/hook', '/hook?x=1', '/echo/a-b-c', '/', '*', 'http://127.0.0.1/flows', '//x', '/%', '/a\x00b', `/${'a'.repeat(9000)}`),
  fc.string({ unit: 'binary-ascii', maxLength: 60 }),
);
const version = fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.1 extra', 'http/1.1', '');
const headerLine = fc.oneof(
  fc.constantFrom(
    'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Type: application/x-www-form-urlencoded', 'Content-Type: multipart/form-data; boundary=zz',
    'Content-Length: 5', 'Content-Length: 0', 'Content-Length: -1', 'Content-Length: 99999999999999999999', 'Content-Length: 5, 6', 'Content-Length: abc',
    'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked', 'Transfer-Encoding: chunked, identity', 'Transfer-Encoding: xchunked',
    'Connection: close', 'Connection: keep-alive', 'Connection: upgrade', 'Upgrade: websocket', 'Expect: 100-continue', 'Expect: nonsense',
    'Authorization: Bearer x', 'Authorization: Basic !!!', 'Origin: https://evil.example', 'Runtime-API-Version: v2', ' folded: continuation',
    'NoColon', ': empty-name', 'Bad Name: x', `X-Long: ${'v'.repeat(20_000)}`, 'X-Ctl: a\x01b',
  ),
  fc.tuple(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 }), fc.string({ unit: 'binary-ascii', maxLength: 40 })).map(([n, v]) => `${n}: ${v}`),
);
const chunked = fc.oneof(
  fc.array(fc.string({ unit: 'grapheme-ascii', maxLength: 30 }), { maxLength: 4 }).map((parts) => parts.map((p) => `${p.length.toString(16)}${crlf}${p}${crlf}`).join('') + `0${crlf}${crlf}`),
  fc.constantFrom(`zz${crlf}abc${crlf}0${crlf}${crlf}`, `5${crlf}ab${crlf}0${crlf}${crlf}`, `3;ext=1${crlf}abc${crlf}0${crlf}Trailer: x${crlf}${crlf}`, `ffffffffffffffff${crlf}a`, `-1${crlf}`, `0${crlf}`, `3${crlf}abc`),
);
const bodyText = fc.oneof(fc.constant(''), fc.string({ unit: 'binary-ascii', maxLength: 200 }), fc.constant('{"flows":[]}'), fc.constant('[{"id":"x"}]'), chunked);
const rawRequest = fc.record({
  method: methodToken(),
  target,
  version,
  headers: fc.array(headerLine, { maxLength: 6 }),
  body: bodyText,
  lineEnd: fc.constantFrom(crlf, '\n', '\r'),
});
const rawStream = fc.record({
  requests: fc.array(rawRequest, { minLength: 1, maxLength: 3 }),
  // How the bytes leave: at once, or trickled in pieces with pauses between them.
  pieces: fc.integer({ min: 1, max: 6 }),
  pauseMs: fc.integer({ min: 0, max: 30 }),
});

function renderRequest(r: typeof rawRequest extends fc.Arbitrary<infer T> ? T : never): string {
  const line = [r.method, r.target, r.version].filter((p) => p !== '').join(' ');
  return `${line}${r.lineEnd}${r.headers.map((h) => `${h}${r.lineEnd}`).join('')}${r.lineEnd}${r.body}`;
}

/** Sends one raw stream; resolves with every byte the server answered once it closed the socket. */
function sendRaw(port: number, stream: typeof rawStream extends fc.Arbitrary<infer T> ? T : never): Promise<string> {
  const bytes = Buffer.from(stream.requests.map(renderRequest).join(''), 'latin1');
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    let stopWatch: NodeJS.Timeout | undefined;
    socket.on('data', (c: Buffer) => received.push(c));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(stopWatch);
      resolve(Buffer.concat(received).toString('latin1'));
    });
    const size = Math.ceil(bytes.length / stream.pieces) || 1;
    let offset = 0;
    const writeNext = () => {
      if (socket.destroyed) return;
      if (offset >= bytes.length) {
        socket.end();
        // After the client stops sending, the server must answer and close without waiting long.
        stopWatch = setTimeout(() => {
          socket.destroy();
          reject(new Error(`no close within ${TIMEOUT_MS} ms after sending ${JSON.stringify(bytes.toString('latin1').slice(0, 400))}; got ${JSON.stringify(Buffer.concat(received).toString('latin1').slice(0, 300))}`));
        }, TIMEOUT_MS);
        return;
      }
      socket.write(bytes.subarray(offset, offset + size));
      offset += size;
      setTimeout(writeNext, stream.pauseMs);
    };
    socket.once('connect', writeNext);
  });
}

test('fuzzing raw request streams against admin and http-in routes: no 5xx, no hang, still serving', { timeout: 900_000 }, async () => {
  await deploy(server, [
    { id: 'st', type: 'tab', label: 'streams' },
    { id: 'h1', type: 'http in', z: 'st', url: '/hook', method: 'post', wires: [['r1']] },
    { id: 'h2', type: 'http in', z: 'st', url: '/echo/:y-:m-:d', method: 'get', wires: [['r1']] },
    { id: 'r1', type: 'http response', z: 'st', wires: [] },
  ], { token });
  const port = Number(new URL(server.url).port);
  let streams = 0;
  const details = await fc.check(
    fc.asyncProperty(fc.array(rawStream, { minLength: 4, maxLength: 4 }), async (batch) => {
      const answers = await Promise.all(batch.map((s) => sendRaw(port, s)));
      streams += answers.length;
      answers.forEach((answer, i) => {
        for (const m of answer.matchAll(/HTTP\/1\.[01] (\d{3})/g)) {
          assert.ok(Number(m[1]) < 500, `${m[0]} for ${JSON.stringify(batch[i].requests.map(renderRequest).join('').slice(0, 400))}: ${answer.slice(0, 300)}`);
        }
      });
    }),
    { numRuns: STREAM_RUNS, endOnFailure: true, seed: process.env.RUNNEL_FUZZ_SEED ? Number(process.env.RUNNEL_FUZZ_SEED) + 2 : undefined },
  );
  if (details.failed) assert.fail(`${String((details.errorInstance as Error)?.message).slice(0, 2000)} (replay: RUNNEL_FUZZ_SEED=${details.seed - 2})`);
  const alive = await request(server.at('auth/login'), { signal: AbortSignal.timeout(TIMEOUT_MS) });
  assert.equal(alive.status, 200);
  const hook = await request(server.at('hook'), { method: 'POST', json: { a: 1 }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  assert.equal(hook.status, 200);
  console.log(`fuzzed ${streams} raw request streams`);
});

test('an upgrade request for a path no websocket serves is answered 404 and closed, not held open', async () => {
  const port = Number(new URL(server.url).port);
  const answer = await sendRaw(port, {
    requests: [{ method: 'GET', target: '/no-websocket-here', version: 'HTTP/1.1', headers: ['Host: 127.0.0.1', 'Connection: upgrade', 'Upgrade: websocket'], body: '', lineEnd: crlf }],
    pieces: 1,
    pauseMs: 0,
  });
  assert.match(answer, /^HTTP\/1\.1 404 Not Found/);
  assert.match(answer, /"code":"not_found"/);
});
