import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costOf } from '../../src/auth/bcrypt.js';
import { createPasswordChecker, hashPassword } from '../../src/auth/passwords.js';

test('hashPassword makes a verifiable bcrypt hash of the given cost', async () => {
  const h = await hashPassword('pw', 5);
  assert.match(h, /^\$2b\$05\$.{53}$/);
  const checker = await createPasswordChecker([{ username: 'u', password: h, permissions: '*' }]);
  assert.equal((await checker.check('u', 'pw'))?.username, 'u');
  assert.equal(await checker.check('u', 'pW'), null);
  assert.equal(costOf(await hashPassword('pw')), 10);
});

test('$2a$, $2b$ and $2y$ hashes are accepted', async () => {
  const b = await hashPassword('secret', 4);
  const users = ['2a', '2b', '2y'].map((v) => ({ username: v, password: b.replace('$2b$', `$${v}$`), permissions: '*' }));
  const checker = await createPasswordChecker(users);
  for (const v of ['2a', '2b', '2y']) assert.equal((await checker.check(v, 'secret'))?.username, v);
});

test('unknown users and malformed stored hashes fail without throwing', async () => {
  const checker = await createPasswordChecker([{ username: 'bad', password: '$2b$04$' + '!'.repeat(53), permissions: '*' }]);
  assert.equal(await checker.check('bad', 'x'), null);
  assert.equal(await checker.check('nobody', 'x'), null);
  assert.equal(await checker.check('__proto__', 'x'), null);
});
