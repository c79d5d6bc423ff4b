import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRedApi } from '../../../src/runtime/red-api/red-api.js';
import type { Node, NodeConfig } from '../../../src/runtime/flows/node.js';
import type { NodeConstructor } from '../../../src/registry/registry.js';
import type { TestServer } from '../../helpers/server.js';
import { flowSuite, type Conf } from '../../nodes/flow.js';

const at = { x: 100, y: 100 };
const node = (id: string, type: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({ id, type, z: 't1', name: id, ...at, wires, ...extra });
const thrower = (id: string, g?: string) => node(id, 'function', { func: 'node.status({ text: "busy" }); throw new Error("boom " + node.name);', outputs: 1, ...(g ? { g } : {}) });
const catcher = (id: string, extra: Conf) => node(id, 'catch', extra, [['caught']]);
const watcher = (id: string, extra: Conf) => node(id, 'status', extra, [['seen']]);

/** A config node type that reports an error and a status when `fail` is called on it. */
function installFailingConfig(server: TestServer): void {
  const runtime = server.instance.runtime;
  const set = runtime.registry.addSet('test-helpers', 'failing-config');
  const RED = createRedApi(runtime, set);
  function FailingConfig(this: Node & { fail?: () => void }, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    this.fail = () => {
      this.status({ text: 'config down' });
      this.error('config failed', { payload: 'from config' });
    };
  }
  RED.nodes.registerType('test-failing-config', FailingConfig as unknown as NodeConstructor);
}

describe('catch and status scopes: groups and config nodes', () => {
  const suite = flowSuite((server) => {
    installFailingConfig(server);
    return [
      { id: 't1', type: 'tab', label: 'scopes' },
      { id: 'outer', type: 'group', z: 't1', nodes: ['inner', 'in-outer', 'catch-outer'] },
      { id: 'inner', type: 'group', z: 't1', g: 'outer', nodes: ['in-inner', 'catch-inner', 'status-inner'] },
      { id: 'other', type: 'group', z: 't1', nodes: ['catch-other'] },
      thrower('in-inner', 'inner'),
      thrower('in-outer', 'outer'),
      thrower('loose'),
      catcher('catch-inner', { g: 'inner', scope: 'group' }),
      catcher('catch-outer', { g: 'outer', scope: 'group' }),
      catcher('catch-other', { g: 'other', scope: 'group' }),
      catcher('catch-all', { scope: null }),
      catcher('catch-uncaught', { scope: null, uncaught: true }),
      watcher('status-inner', { g: 'inner', scope: 'group' }),
      node('status-all', 'status', { scope: null }, [['seen-all']]),
      { id: 'shared', type: 'test-failing-config' },
      node('user', 'function', { func: 'return msg;', outputs: 1, cfg: 'shared' }),
      node('caught', 'test-capture'),
      node('seen', 'test-capture'),
      node('seen-all', 'test-capture'),
    ];
  });
  const caughtBy = (source: string) =>
    suite.capture.of('caught').filter((m) => m.error.source.id === source).map((m) => m.error.message);
  const seenFrom = (source: string) => suite.capture.of('seen').filter((m) => m.status.source.id === source);
  const settle = () => new Promise((r) => setTimeout(r, 150));

  it('an error inside nested groups reaches the group-scoped catch nodes of its own groups and the unscoped ones', async () => {
    suite.receive('in-inner', { payload: 1 });
    await settle();
    const receivers = suite.capture.of('caught').filter((m) => m.error.source.id === 'in-inner');
    assert.equal(receivers.length, 3, 'catch-inner, catch-outer and catch-all; not catch-other, not the uncaught-only node');
    assert.deepEqual(caughtBy('in-inner'), ['Error: boom in-inner', 'Error: boom in-inner', 'Error: boom in-inner']);
  });

  it('a node outside every group is caught by the unscoped catch node only', async () => {
    suite.receive('loose', { payload: 2 });
    await settle();
    assert.equal(caughtBy('loose').length, 1);
  });

  it('a group-scoped status node sees only its group', async () => {
    await settle();
    assert.equal(seenFrom('in-inner').length >= 1, true, 'status of a node in the same group');
    assert.equal(seenFrom('in-outer').length, 0, 'not from the enclosing group');
    assert.equal(seenFrom('loose').length, 0, 'not from outside the groups');
  });

  it("a global config node's error and status go to the flows of the nodes using it", async () => {
    const shared = suite.server.instance.runtime.services.nodes.get('shared') as Node & { fail(): void };
    shared.fail();
    await settle();
    assert.deepEqual(caughtBy('shared'), ['config failed']);
    const caught = suite.capture.of('caught').find((m) => m.error.source.id === 'shared')!;
    assert.equal(caught.payload, 'from config');
    const status = suite.capture.of('seen-all').filter((m) => m.status.source.id === 'shared').map((m) => m.status.text);
    assert.deepEqual(status, ['config down']);
  });
});
