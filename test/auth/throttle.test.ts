import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoginThrottle } from '../../src/auth/throttle.js';

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

test('locks (address, username) after maxFailures, with the seconds left', () => {
  const c = clock();
  const t = new LoginThrottle({ maxFailures: 3, windowMs: 60_000, now: c.now });
  for (let i = 0; i < 3; i++) {
    assert.equal(t.retryAfter('10.0.0.1', 'admin'), 0);
    t.failed('10.0.0.1', 'admin');
    c.t += 1000;
  }
  // First failure at t0, now t0+3s: the window frees up at t0+60s.
  assert.equal(t.retryAfter('10.0.0.1', 'admin'), 57);
  assert.equal(t.retryAfter('10.0.0.2', 'admin'), 0, 'another address is not locked out');
  assert.equal(t.retryAfter('10.0.0.1', 'reader'), 0, 'another user from that address is not locked out');
  c.t += 57_000;
  assert.equal(t.retryAfter('10.0.0.1', 'admin'), 0, 'the oldest failure left the window');
});

test('a success clears the pair counter', () => {
  const c = clock();
  const t = new LoginThrottle({ maxFailures: 2, windowMs: 60_000, now: c.now });
  t.failed('a', 'admin');
  t.failed('a', 'admin');
  t.succeeded('a', 'admin');
  t.failed('a', 'admin');
  assert.equal(t.retryAfter('a', 'admin'), 0);
  t.failed('a', 'admin');
  assert.equal(t.retryAfter('a', 'admin'), 60);
});

test('one address spraying usernames is throttled for every username', () => {
  const c = clock();
  const t = new LoginThrottle({ maxFailures: 2, windowMs: 10_000, addressFactor: 4, now: c.now });
  for (let i = 0; i < 7; i++) t.failed('a', `user${i}`);
  assert.equal(t.retryAfter('a', 'fresh'), 0);
  t.failed('a', 'user7');
  assert.equal(t.retryAfter('a', 'fresh'), 10);
  assert.equal(t.retryAfter('b', 'fresh'), 0);
  // Attempts are counted before the check; a success takes back only its own count, so a
  // sprayer with one valid account gains nothing.
  t.failed('a', 'user7');
  t.succeeded('a', 'user7');
  assert.equal(t.retryAfter('a', 'fresh'), 10);
});

test('prune forgets stale keys, and the key count is bounded', () => {
  const c = clock();
  const t = new LoginThrottle({ maxFailures: 1, windowMs: 1000, addressFactor: 1000, maxKeys: 100, now: c.now });
  for (let i = 0; i < 500; i++) t.failed('a', `u${i}`);
  const internals = t as unknown as { pairs: Map<string, number[]>; addresses: Map<string, number[]> };
  assert.equal(internals.pairs.size, 100);
  assert.equal(t.retryAfter('a', 'u499'), 1, 'the most recent keys are kept');
  c.t += 1001;
  t.prune();
  assert.equal(internals.pairs.size, 0);
  assert.equal(internals.addresses.size, 0);
});
