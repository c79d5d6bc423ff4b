import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startServer, type TestServer } from '../helpers/server.js';
import { deploy, type DeploymentType } from '../helpers/deploy.js';
import { Editor } from '../helpers/comms.js';

/**
 * An editor hears of each deploy once: one retained `notification/runtime-deploy` with the new
 * rev, whatever the deployment type (the editor compares it with the rev it holds, and a second
 * one is at best noise).
 */
describe('runtime-deploy on /comms', { timeout: 60_000 }, () => {
  let server: TestServer;
  let editor: Editor;
  const revisions = () => editor.on('notification/runtime-deploy').map((e) => e.data.revision as string);

  before(async () => {
    server = await startServer({ logging: { level: 'fatal' } });
    editor = new Editor(server.url);
    await editor.send({ subscribe: 'notification/#' });
    await editor.waitFor('notification/runtime-deploy');
  });
  after(async () => {
    editor.close();
    await server.dispose();
  });

  it('holds the loaded rev for an editor that connects after start', () => {
    assert.deepEqual(revisions(), [server.instance.runtime.rev]);
  });

  it('sends exactly one per deploy, for every deployment type', async () => {
    const expected = revisions();
    const types: DeploymentType[] = ['full', 'nodes', 'flows', 'reload'];
    for (const [i, type] of types.entries()) {
      const flows = [{ id: 'c1', type: 'comment', z: 't1', name: `deploy ${i}`, x: 10, y: 10, wires: [] }];
      const rev = await deploy(server, flows, { tab: 't1', api: 'v2', type });
      expected.push(rev);
      await eventually(() => revisions().length >= expected.length);
    }
    // A second notice would be published with the first, so it would reach this socket before the
    // notice of one more deploy: waiting for that one sees any duplicate without a timed wait.
    const flows = [{ id: 'c1', type: 'comment', z: 't1', name: 'last', x: 10, y: 10, wires: [] }];
    const last = await deploy(server, flows, { tab: 't1', api: 'v2', type: 'full' });
    await eventually(() => revisions().includes(last));
    assert.deepEqual(revisions(), [...expected, last]);
  });
});
