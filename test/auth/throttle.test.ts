import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientOf, LoginThrottle, type ThrottleOptions } from '../../src/auth/throttle.js';
import { MemoryLoginFailures } from '../../src/storage/memory-login-failures.js';

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

function throttle(options: ThrottleOptions, store = new MemoryLoginFailures()) {
  return new LoginThrottle(store, options);
}

test('locks (address, username) after maxFailures, with the seconds left', async () => {
  const c = clock();
  const t = throttle({ maxFailures: 3, windowMs: 60_000, now: c.now });
  for (let i = 0; i < 3; i++) {
    assert.equal(await t.retryAfter('10.0.0.1', 'admin'), 0);
    assert.equal((await t.attempt('10.0.0.1', 'admin')).wait, 0);
    c.t += 1000;
  }
  // First failure at t0, now t0+3s: the window frees up at t0+60s.
  assert.equal(await t.retryAfter('10.0.0.1', 'admin'), 57);
  assert.deepEqual(await t.attempt('10.0.0.1', 'admin'), { wait: 57, clean: false }, 'a refused attempt is not counted');
  assert.equal(await t.retryAfter('10.0.0.2', 'admin'), 0, 'another address is not locked out');
  assert.equal(await t.retryAfter('10.0.0.1', 'reader'), 0, 'another user from that address is not locked out');
  c.t += 57_000;
  assert.equal(await t.retryAfter('10.0.0.1', 'admin'), 0, 'the oldest failure left the window');
});

test('a success clears the pair counter', async () => {
  const c = clock();
  const t = throttle({ maxFailures: 2, windowMs: 60_000, now: c.now });
  await t.attempt('a', 'admin');
  await t.attempt('a', 'admin');
  await t.succeeded('a', 'admin');
  await t.attempt('a', 'admin');
  assert.equal(await t.retryAfter('a', 'admin'), 0);
  await t.attempt('a', 'admin');
  assert.equal(await t.retryAfter('a', 'admin'), 60);
});

test('one address spraying usernames is throttled for every username', async () => {
  const c = clock();
  const t = throttle({ maxFailures: 2, windowMs: 10_000, addressFactor: 4, now: c.now });
  for (let i = 0; i < 7; i++) await t.attempt('a', `user${i}`);
  assert.equal(await t.retryAfter('a', 'fresh'), 0);
  await t.attempt('a', 'user7');
  assert.equal(await t.retryAfter('a', 'fresh'), 10);
  assert.equal(await t.retryAfter('b', 'fresh'), 0);
  // A success takes back only its own count, so a sprayer with one valid account gains nothing.
  await t.succeeded('a', 'user7');
  assert.equal(await t.retryAfter('a', 'fresh'), 0);
  assert.equal((await t.attempt('a', 'user7')).wait, 0);
  assert.equal(await t.retryAfter('a', 'fresh'), 10);
});

test('failures of one username from every address slow its logins down, doubling per failure', async () => {
  const c = clock();
  const t = throttle({ maxFailures: 2, windowMs: 60_000, userDelayMs: 500, maxUserDelayMs: 2000, now: c.now });
  await t.attempt('a', 'admin');
  assert.equal(await t.userDelay('admin'), 0);
  await t.attempt('b', 'admin');
  assert.equal(await t.userDelay('admin'), 500);
  await t.attempt('c', 'admin');
  assert.equal(await t.userDelay('admin'), 1000);
  for (const a of ['d', 'e', 'f']) await t.attempt(a, 'admin');
  assert.equal(await t.userDelay('admin'), 2000, 'bounded');
  assert.equal(await t.userDelay('other'), 0);
});

test('two throttles on one store count each other\'s failures (instances sharing storage)', async () => {
  const c = clock();
  const store = new MemoryLoginFailures();
  const a = throttle({ maxFailures: 2, windowMs: 60_000, now: c.now }, store);
  const b = throttle({ maxFailures: 2, windowMs: 60_000, now: c.now }, store);
  await a.attempt('x', 'admin');
  await b.attempt('x', 'admin');
  assert.equal(await a.retryAfter('x', 'admin'), 60);
  assert.equal((await b.attempt('x', 'admin')).wait, 60);
});

test('prune forgets failures that left the window, and the store bounds its keys', async () => {
  const c = clock();
  const store = new MemoryLoginFailures(100);
  const t = throttle({ maxFailures: 1, windowMs: 1000, addressFactor: 1000, now: c.now }, store);
  for (let i = 0; i < 500; i++) await t.attempt('a', `u${i}`);
  assert.equal(store.size, 100);
  assert.equal(await t.retryAfter('a', 'u499'), 1, 'the most recent keys are kept');
  c.t += 1001;
  await t.prune();
  assert.equal(store.size, 0);
});

test('an attempt is clean only when its address had no failure in the window before it', async () => {
  const c = clock();
  const t = throttle({ maxFailures: 5, windowMs: 60_000, now: c.now });
  assert.deepEqual(await t.attempt('a', 'admin'), { wait: 0, clean: true });
  // The first is still in flight (counted): a second one from that address, for any user, is not clean.
  assert.deepEqual(await t.attempt('a', 'reader'), { wait: 0, clean: false });
  assert.deepEqual(await t.attempt('b', 'admin'), { wait: 0, clean: true }, 'another address is');
  c.t += 60_001;
  assert.deepEqual(await t.attempt('a', 'admin'), { wait: 0, clean: true }, 'failures that left the window do not count');
});

test('the addresses of one IPv6 /64 share one budget, and a fresh one of them is not clean', async () => {
  assert.equal(clientOf('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientOf('2001:DB8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
  assert.equal(clientOf('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientOf('::1:2:3:4:5'), '0:0:0:1::/64');
  assert.equal(clientOf('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(clientOf('203.0.113.5'), '203.0.113.5');
  const c = clock();
  const t = throttle({ maxFailures: 2, windowMs: 60_000, now: c.now });
  assert.deepEqual(await t.attempt('2001:db8:1:2::a', 'admin'), { wait: 0, clean: true });
  assert.deepEqual(await t.attempt('2001:db8:1:2::b', 'admin'), { wait: 0, clean: false });
  assert.equal(await t.retryAfter('2001:db8:1:2::c', 'admin'), 60);
  assert.equal(await t.retryAfter('2001:db8:1:3::a', 'admin'), 0, 'another /64 has its own budget');
});
