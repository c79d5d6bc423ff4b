/**
 * Node-RED's module lists (palette install, update and function-node module lists), matched as
 * @node-red/registry 4.1.15 matches them. The expected column was produced by running Node-RED's own
 * checkModuleAllowed on each row.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModuleRules } from '../../src/registry/module-rules.js';

type Row = [allowList: string[] | null, denyList: string[] | null, name: string, version: string | null, allowed: boolean];

const NODE_RED: Row[] = [
  [null, null, 'anything', null, true],
  [['lodash'], null, 'lodash', null, true],
  [['lodash'], null, 'moment', null, false],
  [['lodash'], [], 'moment', null, true],
  [[], null, 'lodash', null, false],
  [null, ['left-*'], 'left-pad', null, false],
  [null, ['left-*'], 'lodash', null, true],
  [['lodash', '@acme/*'], ['*'], '@acme/x', null, true],
  [['lodash', '@acme/*'], ['*'], 'moment', null, false],
  [['left-*'], ['left-pad'], 'left-pad', null, false],
  [['a*b*'], ['a*bc'], 'axbc', null, true],
  [['a*bc'], ['a*b*'], 'axbc', null, false],
  [['node-red-contrib-*'], ['node-red-*'], 'node-red-contrib-x', null, true],
  [['node-red-*'], ['node-red-contrib-*'], 'node-red-contrib-x', null, false],
  [['node-red-*'], ['node-red-contrib-*'], 'node-red-node-x', null, true],
  [null, ['lodash@<4'], 'lodash', '3.10.1', false],
  [null, ['lodash@<4'], 'lodash', '4.17.21', true],
  [null, ['lodash@<4'], 'lodash', null, false],
  [['node-red-contrib-x@2.x'], ['*'], 'node-red-contrib-x', '2.1.0', true],
  [['node-red-contrib-x@2.x'], ['*'], 'node-red-contrib-x', '1.0.0', false],
  [['@scope/*'], null, '@scope/name', null, true],
  [['@scope/name@1.x'], null, '@scope/name', '1.2.0', true],
  [['@scope/name@1.x'], null, '@scope/name', '2.0.0', false],
];

describe('module allow and deny lists', () => {
  it("decide as Node-RED's checkModuleAllowed: a missing list is [\"*\"] once the other is given, wildcards, @version ranges, the more specific rule wins", () => {
    for (const [allowList, denyList, name, version, allowed] of NODE_RED) {
      const rules = new ModuleRules(allowList ?? undefined, denyList ?? undefined);
      assert.equal(rules.allows(name, version ?? undefined), allowed, JSON.stringify({ allowList, denyList, name, version }));
    }
  });

  it('an empty deny list allows everything (nothing is checked), and a rule with a range makes the version matter', () => {
    assert.equal(new ModuleRules(['x'], []).allowsAll, true);
    assert.equal(new ModuleRules(['x'], undefined).allowsAll, false);
    assert.equal(new ModuleRules(['x@1.x'], undefined).versioned, true);
    assert.equal(new ModuleRules(['x*'], ['y']).versioned, false);
    assert.equal(new ModuleRules(undefined, ['a.b']).allows('axb'), true, "a dot is literal (Node-RED's pattern would let it match any character)");
  });
});
