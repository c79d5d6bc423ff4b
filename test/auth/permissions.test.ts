import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasPermission, resolveScope } from '../../src/auth/permissions.js';
import { OAuthError } from '../../src/auth/oauth-error.js';

test('hasPermission follows Node-RED rules', () => {
  const cases: Array<[string[], string, boolean]> = [
    [['*'], 'flows.write', true],
    [['*'], 'anything', true],
    [['flows.read'], 'flows.read', true],
    [['flows.read'], 'flows.write', false],
    [['flows.read'], 'nodes.read', false],
    [['read'], 'flows.read', true],
    [['read'], 'read', true],
    [['*.read'], 'settings.read', true],
    [['read'], 'flows.write', false],
    [['write'], 'flows.write', true],
    [['*.write'], 'nodes.write', true],
    [['write'], 'flows.read', false],
    [['flows.*'], 'flows.read', false],
    [[], 'flows.read', false],
    [[], '', true],
    [['flows.read'], '', true],
    [['nodes.read', 'flows.write'], 'flows.write', true],
    [['read'], 'flowsread', false],
  ];
  for (const [scope, permission, expected] of cases) {
    assert.equal(hasPermission(scope, permission), expected, `${JSON.stringify(scope)} vs "${permission}"`);
  }
});

test('resolveScope: missing or empty means the user permissions', () => {
  assert.deepEqual(resolveScope(undefined, '*'), ['*']);
  assert.deepEqual(resolveScope('', 'read'), ['read']);
  assert.deepEqual(resolveScope('   ', ['flows.read', 'nodes.read']), ['flows.read', 'nodes.read']);
});

test('resolveScope: a covered request is granted as asked, split on spaces and deduplicated', () => {
  assert.deepEqual(resolveScope('*', '*'), ['*']);
  assert.deepEqual(resolveScope('read', '*'), ['read']);
  assert.deepEqual(resolveScope('flows.read  nodes.read flows.read', 'read'), ['flows.read', 'nodes.read']);
  assert.deepEqual(resolveScope('flows.write', ['flows.write', 'nodes.read']), ['flows.write']);
});

test('resolveScope: any uncovered element is invalid_scope', () => {
  const check = (requested: string, perms: string | string[]) =>
    assert.throws(
      () => resolveScope(requested, perms),
      (e: unknown) => e instanceof OAuthError && e.status === 400 && e.error === 'invalid_scope',
    );
  check('*', 'read');
  check('read flows.write', 'read');
  check('write', ['flows.write']);
  check('flows.read', ['flows.write']);
});
