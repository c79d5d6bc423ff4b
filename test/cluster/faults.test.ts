import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { type TestPostgres } from '../helpers/postgres.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';

/** The database going away: flows keep serving, reads answer from memory, writes say 503 and change nothing. */

const v2 = { 'Runtime-API-Version': 'v2' };
const hello = (text: string) => [
  { id: 't1', type: 'tab', label: 'Hello' },
  { id: 'in', type: 'http in', z: 't1', url: '/hello', method: 'get', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 't1', outputs: 1, x: 1, y: 1, wires: [['out']], func: `msg.payload = ${JSON.stringify(text)}; return msg;` },
  { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
];
const loginBody = { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD };

describe('cluster: the database stops and comes back', { timeout: 120_000 }, () => {
  let pg: TestPostgres;
  let nodes: ClusterInstance[];
  let token: string;

  const suite = clusterSuite('faults', 2);
  before(async () => {
    ({ pg, nodes } = suite);
    token = (await request(nodes[0]!.at('auth/token'), { method: 'POST', json: loginBody })).body.access_token;
  });

  it('keeps serving http-in, answers reads, refuses writes with 503 + Retry-After, and resumes by itself', async () => {
    const first = await request(nodes[0]!.at('flows'), { method: 'POST', token, headers: v2, json: { flows: hello('before') } });
    assert.equal(first.status, 200, first.text);
    for (const n of nodes) await eventually(async () => (await request(n.at('hello'))).text === 'before', 5000);

    let stopLoad = false;
    const outcomes = { ok: 0, failed: [] as string[] };
    const load = (async () => {
      while (!stopLoad) {
        await Promise.all(nodes.map(async (n) => {
          const r = await request(n.at('hello')).catch((e: Error) => ({ status: 0, text: e.message }));
          if (r.status === 200 && r.text === 'before') outcomes.ok++;
          else outcomes.failed.push(`${n.id}: ${r.status} ${r.text}`);
        }));
      }
    })();

    try {
      await pg.stop();
      for (const n of nodes) {
        const started = Date.now();
        const deploy = await request(n.at('flows'), { method: 'POST', token, headers: v2, json: { flows: hello('during') } });
        assert.equal(deploy.status, 503, deploy.text);
        assert.equal(deploy.body.code, 'storage_unavailable');
        assert.equal(deploy.headers.get('retry-after'), '5');
        assert.ok(Date.now() - started < 10_000, 'a write while the database is down answers instead of hanging');
        const login = await request(n.at('auth/token'), { method: 'POST', json: loginBody });
        assert.equal(login.status, 503, login.text);
        assert.equal(login.body.error, 'temporarily_unavailable');
        assert.ok(login.headers.get('retry-after'));
        const read = await request(n.at('flows'), { token, headers: v2 });
        assert.equal(read.status, 200);
        assert.deepEqual(read.body.flows, hello('before'), 'nothing was half-applied');
        assert.equal((await request(n.at('flows/state'), { token })).body.rev, first.body.rev);
      }

      await pg.start();
      // A second tab: a 'flows' deploy leaves the /hello tab running on every instance.
      const next = [...hello('before'), { id: 't2', type: 'tab', label: 'Other' }, { id: 'c', type: 'comment', z: 't2', x: 1, y: 1, wires: [] }];
      const resumed = await eventually(async () => {
        const r = await request(nodes[1]!.at('flows'), { method: 'POST', token, headers: { ...v2, 'Runtime-Deployment-Type': 'flows' }, json: { flows: next } });
        return r.status === 200 ? r : undefined;
      }, 20_000, 200);
      for (const n of nodes) await eventually(async () => (await request(n.at('flows/state'), { token })).body.rev === resumed!.body.rev, 10_000);
    } finally {
      // Also when an assertion failed: the load loop must end or the test file never does.
      stopLoad = true;
      await load;
    }
    assert.deepEqual(outcomes.failed, [], 'no http-in request failed while the database was down and came back');
    assert.ok(outcomes.ok > 0);
  });
});
