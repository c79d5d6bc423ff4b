import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';

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
async function send(r: FuzzRequest): Promise<{ deployed: boolean }> {
  const init: RequestInit = { method: r.method, headers: headersFor(r), signal: AbortSignal.timeout(TIMEOUT_MS) };
  if (r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD') init.body = typeof r.body === 'string' ? r.body : r.body.body;
  const url = server.at(r.path);
  const res = await fetch(url, init);
  const text = await res.text();
  sent++;
  const what = `${r.method} /${r.path.slice(0, 80)} → ${res.status} ${text.slice(0, 200)}`;
  assert.ok(res.status < 500, what);
  if (res.status >= 400 && r.method !== 'HEAD') {
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, what);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const shaped =
      (typeof parsed.code === 'string' && typeof parsed.message === 'string') ||
      (typeof parsed.error === 'string' && typeof parsed.error_description === 'string');
    assert.ok(shaped, what);
  }
  const deployed = r.method === 'POST' && /^flows\/?$/.test(r.path) && res.status < 300;
  return { deployed };
}

async function activeRev(): Promise<string> {
  const res = await request(server.at('flows'), { headers: { 'runtime-api-version': 'v2' }, token });
  assert.equal(res.status, 200);
  return res.body.rev as string;
}

test('fuzzing every admin route: no 5xx, JSON errors, no hangs, config changes only on success', { timeout: 240_000 }, async () => {
  let rev = await activeRev();
  await fc.assert(
    fc.asyncProperty(fc.array(fuzzRequest, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
      const results = await Promise.all(batch.map(send));
      const now = await activeRev();
      if (!results.some((r) => r.deployed)) assert.equal(now, rev, 'the active flows changed although no deploy succeeded');
      rev = now;
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
  assert.ok(sent >= RUNS * BATCH);
  const alive = await request(server.at('auth/login'), { signal: AbortSignal.timeout(TIMEOUT_MS) });
  assert.equal(alive.status, 200);
  assert.deepEqual(alive.body, { type: 'credentials', prompts: [{ id: 'username', type: 'text', label: 'user.username' }, { id: 'password', type: 'password', label: 'user.password' }] });
  console.log(`fuzzed ${sent} requests`);
});
