import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { performance } from 'node:perf_hooks';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { compilePath } from '../../src/server/http-node/path-pattern.js';
import { send } from './support.js';
import { deploy } from '../helpers/deploy.js';

/**
 * The http-in route patterns, free of ReDoS, and Express 4's `:subpath(*)`.
 * `/d/:y-:m-:d` compiled to a backtracking expression: one 6 KB path froze the process for 22 s
 * (34 s measured here). Patterns now compile exactly as Express 4 compiles them, whose output
 * keeps a later parameter from matching the literal before it. The fuzz bound below is a hang
 * detector (hostile paths took tens of seconds), not a speed goal.
 */
const HANG_BOUND_MS = 1000;
let server: TestServer;
before(async () => {
  server = await startServer({ logging: { level: 'fatal' } });
  const params = (id: string, url: string) => [
    { id: `in-${id}`, type: 'http in', z: 't', url, method: 'get', wires: [[`fn-${id}`]] },
    { id: `fn-${id}`, type: 'function', z: 't', func: 'msg.payload = msg.req.params; return msg;', outputs: 1, wires: [['out']] },
  ];
  const flows = [
    { id: 't', type: 'tab', label: 'routes' },
    ...params('date', '/d/:y-:m-:d'),
    ...params('any', 'routing/any/:subpath(*)'),
    ...params('file', '/f/:file.:ext?'),
    ...params('num', '/n/:id(\\d+)'),
    { id: 'out', type: 'http response', z: 't', wires: [] },
  ];
  await deploy(server, flows);
});
after(() => server.dispose());

test('a 6 KB hostile path against /d/:y-:m-:d is answered at once and the admin API keeps answering', async () => {
  const hostile = send(server.at(`d/${'-'.repeat(6000)}/x`), { timeoutMs: 10_000 });
  const admin = send(server.at('flows'), { timeoutMs: 10_000 });
  assert.equal((await hostile).status, 404);
  assert.equal((await admin).status, 200);
  const ok = await request(server.at('d/2026-11-24'));
  assert.deepEqual(ok.body, { y: '2026', m: '11', d: '24' });
});

test('Express 4 captures: :subpath(*), :file.:ext?, :id(\\d+)', async () => {
  assert.deepEqual((await request(server.at('routing/any/a/b/c'))).body, { 0: 'a/b/c', subpath: 'a/b/c' });
  assert.deepEqual((await request(server.at('f/report.pdf'))).body, { file: 'report', ext: 'pdf' });
  assert.deepEqual((await request(server.at('f/report'))).body, { file: 'report' });
  assert.deepEqual((await request(server.at('n/42'))).body, { id: '42' });
  assert.equal((await request(server.at('n/x42'))).status, 404);
});

test('the patterns of the Express 4 guide compile and capture as Express does', () => {
  const cases: [string, string, Record<string, string | undefined> | null][] = [
    ['/users/:userId/books/:bookId', '/users/34/books/8989', { userId: '34', bookId: '8989' }],
    ['/flights/:from-:to', '/flights/LAX-SFO', { from: 'LAX', to: 'SFO' }],
    ['/plantae/:genus.:species', '/plantae/Prunus.persica', { genus: 'Prunus', species: 'persica' }],
    ['/user/:userId(\\d+)', '/user/42', { userId: '42' }],
    ['/ab*cd', '/abRANDOMcd', { 0: 'RANDOM' }],
    ['/ab?cd', '/acd', {}],
    ['/ab(cd)?e', '/abe', { 0: undefined }],
    ['/a/:b?', '/a', { b: undefined }],
    ['/A/b', '/a/B/', {}],
  ];
  for (const [pattern, path, expected] of cases) {
    const { regexp, keys } = compilePath(pattern, true);
    const m = regexp.exec(path);
    if (expected === null) {
      assert.equal(m, null, pattern);
      continue;
    }
    assert.ok(m, `${pattern} should match ${path}`);
    const got: Record<string, string | undefined> = {};
    keys.forEach((k, i) => (got[k] = m[i + 1]));
    assert.deepEqual(got, expected, pattern);
  }
});

const segment = fc.oneof(
  fc.constantFrom('a', 'users', 'x-y', '*', ':p', ':p?', ':p*', ':p(*)', ':p(\\d+)'),
  fc.array(fc.constantFrom(':a', ':b', ':c', '-', '.', 'to', '*', 'x'), { minLength: 1, maxLength: 5 }).map((parts) => parts.join('')),
);
const pattern = fc.array(segment, { minLength: 1, maxLength: 5 }).map((segments) => `/${segments.join('/')}`);
const hostilePath = fc.tuple(fc.array(fc.constantFrom('/', '-', '.', 'a', 'to', '-to-', '%'), { minLength: 1, maxLength: 4 }), fc.constantFrom('', '/', '!', '/x/')).map(
  ([unit, tail]) => {
    const u = unit.join('');
    return `/${u.repeat(Math.ceil(6000 / u.length)).slice(0, 6000)}${tail}`;
  },
);

test('fuzz: every generated pattern matches 6 KB hostile paths without backtracking blow-up', () => {
  let worst = 0;
  fc.assert(
    fc.property(pattern, fc.array(hostilePath, { minLength: 4, maxLength: 4 }), fc.boolean(), (p, paths, end) => {
      let compiled;
      try {
        compiled = compilePath(p, end);
      } catch {
        return; // Express refuses it too (an invalid regular expression).
      }
      for (const path of paths) {
        const t = performance.now();
        compiled.matcher.exec(path);
        const ms = performance.now() - t;
        worst = Math.max(worst, ms);
        assert.ok(ms < HANG_BOUND_MS, `${p} on a hostile path took ${ms.toFixed(0)} ms`);
      }
    }),
    { numRuns: 400, seed: process.env.RUNNEL_FUZZ_SEED ? Number(process.env.RUNNEL_FUZZ_SEED) : undefined },
  );
  console.log(`route pattern fuzz: worst match ${worst.toFixed(1)} ms`);
});

test('fuzz: the linear matcher captures exactly what Express 4\'s expression captures', () => {
  const shortPath = fc.array(fc.constantFrom('/', '-', '.', 'a', 'B', 'to', 'x', '1', '%2'), { maxLength: 14 }).map((parts) => `/${parts.join('')}`);
  fc.assert(
    fc.property(pattern, fc.array(shortPath, { minLength: 20, maxLength: 20 }), fc.boolean(), (p, paths, end) => {
      let compiled;
      try {
        compiled = compilePath(p, end);
      } catch {
        return;
      }
      for (const path of paths) {
        const native = compiled.regexp.exec(path);
        const linear = compiled.matcher.exec(path);
        assert.deepEqual(linear && [...linear], native && [...native], `${p} on ${path}`);
      }
    }),
    { numRuns: 600, seed: process.env.RUNNEL_FUZZ_SEED ? Number(process.env.RUNNEL_FUZZ_SEED) : undefined },
  );
});
