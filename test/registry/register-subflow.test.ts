import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/registry/registry.js';
import { nodeClasses } from '../../src/runtime/flows/node-classes.js';

describe('Registry.registerSubflow', () => {
  const registry = new Registry(nodeClasses);
  registry.addModule({ name: 'm', version: '1.0.0', builtin: false });
  const set = registry.addSet('m', 's');
  const node = { id: 'n', type: 'function', z: 'sf', x: 1, y: 1, wires: [] };

  it('refuses what is not a subflow definition, naming the problem', () => {
    const cases: [unknown, RegExp][] = [
      [null, /needs a subflow definition/],
      [{ id: 'sf', type: 'tab', flow: [] }, /needs a subflow definition/],
      [{ id: 'sf', type: 'subflow' }, /needs a subflow definition/],
      [{ id: 'sf', type: 'subflow', flow: [node, null] }, /flow\[1\] is not a node/],
      [{ id: 'sf', type: 'subflow', flow: [{ id: 'x' }] }, /flow\[0\] is not a node/],
      [{ id: 'sf', type: 'subflow', flow: [node], env: 'NAME=1' }, /env must be an array/],
    ];
    for (const [def, message] of cases) assert.throws(() => registry.registerSubflow(set, def), message);
    assert.equal(registry.isKnownType('sf:sf'), false, 'nothing was registered');
  });

  it('registers meta.type (else sf:<id>) with cred env entries as password credentials', () => {
    const def = { id: 'sf', type: 'subflow', flow: [node], env: [{ name: 'KEY', type: 'cred' }, { name: 'N', type: 'num', value: '1' }], meta: { type: 'my-sub' } };
    assert.equal(registry.registerSubflow(set, def), 'my-sub');
    assert.equal(registry.getSubflowDefinition('my-sub'), def);
    assert.deepEqual(registry.getCredentialDefinition('my-sub'), { KEY: { type: 'password' } });
    assert.equal(registry.registerSubflow(set, { id: 'other', type: 'subflow', flow: [] }), 'sf:other');
  });
});
