import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { ADMIN_PASSWORD, request } from '../helpers/server.js';

/** Login throttling counts in the database: failures on one instance count on every other. */
describe('cluster: login throttling across instances', { timeout: 120_000 }, () => {
  let nodes: ClusterInstance[];
  const suite = clusterSuite('throttle', 3);
  before(() => {
    ({ nodes } = suite);
  });

  const login = (n: ClusterInstance, username: string, password: string) => request(n.at('auth/token'), {
    method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username, password },
  });

  it('refuses a login on one instance once the failures on the others reached the limit (maxFailures 5)', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await login(nodes[i % 3]!, 'admin', 'wrong');
      assert.equal(r.status, 400, `attempt ${i}: ${r.text}`);
    }
    for (const n of nodes) {
      const r = await login(n, 'admin', ADMIN_PASSWORD);
      assert.equal(r.status, 429, `${n.id}: ${r.text}`);
      assert.equal(r.body.error, 'temporarily_unavailable');
      assert.ok(Number(r.headers.get('retry-after')) > 0);
    }
  });

  it('lets only the limit through when a burst of guesses is spread over the three instances at once', async () => {
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => login(nodes[i % 3]!, 'ghost', 'guess')));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 400).length, 5, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 10, statuses.join(','));
  });
});
