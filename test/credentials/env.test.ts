import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { substituteEnv } from '../../src/credentials/env.js';

describe('substituteEnv', { timeout: 30_000 }, () => {
  const env: Record<string, unknown> = { USER: 'alice', PORT: 8080, EMPTY: '' };
  const lookup = (name: string) => env[name];

  it('replaces whole-string ${NAME} and $(NAME) at any depth and leaves everything else', () => {
    const input = { user: '${USER}', old: '$(USER)', port: '${PORT}', mixed: 'x-${USER}', list: ['${USER}', 1], nested: { a: '${USER}' } };
    assert.deepEqual(substituteEnv(input, lookup), {
      user: 'alice', old: 'alice', port: 8080, mixed: 'x-${USER}', list: ['alice', 1], nested: { a: 'alice' },
    });
    assert.equal(input.user, '${USER}');
  });

  it('keeps the string when the name is unknown or empty', () => {
    assert.deepEqual(substituteEnv({ a: '${NOPE}', b: '${EMPTY}' }, lookup), { a: '${NOPE}', b: '${EMPTY}' });
  });
});
