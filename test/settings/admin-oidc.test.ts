import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveSettings } from '../../src/settings/settings.js';
import { ROOT } from '../helpers/process.js';

const oidc = (extra: Record<string, unknown>) => ({ adminAuth: { type: 'oidc', issuer: 'https://idp.example.com/realms/acme', clientId: 'runnel', ...extra } });

test('adminAuth.type "oidc" takes the issue\'s settings, with defaults for the rest', () => {
  const auth = resolveSettings(oidc({ clientSecret: 's', scope: 'openid groups', groupsClaim: 'roles', permissions: { ops: '*', viewers: ['read'] } }), ROOT).adminAuth;
  assert.equal(auth?.type, 'oidc');
  assert.deepEqual(auth.type === 'oidc' && auth.oidc, {
    issuer: 'https://idp.example.com/realms/acme', clientId: 'runnel', clientSecret: 's', scope: 'openid groups', groupsClaim: 'roles',
    usernameClaim: 'preferred_username', permissions: { ops: '*', viewers: ['read'] }, label: 'Sign in with idp.example.com', autoLogin: false,
  });
  assert.deepEqual(auth.type === 'oidc' && auth.users, [], 'no local emergency accounts unless listed');
  const defaults = resolveSettings(oidc({}), ROOT).adminAuth;
  assert.ok(defaults?.type === 'oidc' && defaults.oidc.scope === 'openid profile email' && defaults.oidc.groupsClaim === 'groups');
});

test('adminAuth.type "oidc" refuses settings that would weaken the login, naming the key', () => {
  const refusals: Array<[Record<string, unknown>, RegExp]> = [
    [{ issuer: 'http://idp.example.com' }, /adminAuth\.issuer must use https/],
    [{ issuer: 'not a url' }, /adminAuth\.issuer must be an absolute http\(s\) URL/],
    [{ clientId: '' }, /adminAuth\.clientId must be a non-empty string/],
    [{ scope: 'profile email' }, /adminAuth\.scope must include "openid"/],
    [{ permissions: { ops: 7 } }, /adminAuth\.permissions must map group names to permissions/],
    [{ users: [{ username: 'admin', password: 'plain', permissions: '*' }] }, /adminAuth\.users\[0\]\.password must be a bcrypt hash/],
  ];
  for (const [extra, message] of refusals) assert.throws(() => resolveSettings(oidc(extra), ROOT), message);
  assert.doesNotThrow(() => resolveSettings(oidc({ issuer: 'http://127.0.0.1:9000' }), ROOT), 'plain http to this machine');
});
