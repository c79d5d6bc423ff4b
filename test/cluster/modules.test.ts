import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance, type TestCluster } from '../helpers/cluster.js';
import { ADMIN_PASSWORD, request } from '../helpers/server.js';
import { copyFixture } from '../registry/support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';

/**
 * Node modules in a cluster are each instance's own (reconciling one shared list is not built
 * yet): an install on one instance neither shows up on another nor is lost when another saves its list.
 */
describe('cluster: node modules stay per instance', { timeout: 120_000 }, () => {
  let cluster: TestCluster;
  let nodes: ClusterInstance[];
  let work: string;

  const suite = clusterSuite('modules', 2);
  before(async () => {
    ({ cluster, nodes } = suite);
    work = await tempDir();
  });
  after(() => removeDir(work));

  const tokenFor = async (n: ClusterInstance) => (await request(n.at('auth/token'), {
    method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
  })).body.access_token as string;

  it('keeps each instance\'s installed modules through the other\'s installs and its own restart', async () => {
    const [a, b] = nodes as [ClusterInstance, ClusterInstance];
    const token = await tokenFor(a);
    const installed = await request(a.at('nodes'), { method: 'POST', token, json: { module: await copyFixture('node-red-contrib-upper', work, 'upper-a') } });
    assert.equal(installed.status, 200, installed.text);
    assert.equal((await request(b.at('nodes/node-red-contrib-upper'), { token })).status, 404);
    const onB = await request(b.at('nodes'), { method: 'POST', token, json: { module: await copyFixture('esm-nodes', work, 'esm-b') } });
    assert.equal(onB.status, 200, onB.text);

    a.process.child.kill('SIGTERM');
    await a.process.exited;
    const again = await cluster.add(a.id);
    const listed = await request(again.at('nodes/node-red-contrib-upper'), { token });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.nodes[0].loaded, true);
    assert.equal((await request(again.at(`nodes/${onB.body.name}`), { token })).status, 404);
  });
});
