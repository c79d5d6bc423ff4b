import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KnownAddresses } from '../../src/auth/known-addresses.js';

test('known addresses are kept per user, the last 16, for 30 days', () => {
  const clock = { t: 0 };
  const known = new KnownAddresses(() => clock.t);
  for (let i = 0; i < 17; i++) known.remember('admin', `10.0.0.${i}`);
  assert.equal(known.has('admin', '10.0.0.0'), false, 'the oldest of 17 is dropped');
  assert.equal(known.has('admin', '10.0.0.16'), true);
  assert.equal(known.has('reader', '10.0.0.16'), false, 'another user does not share them');
  clock.t += 30 * 24 * 3600_000;
  assert.equal(known.has('admin', '10.0.0.16'), false, 'expired after 30 days');
});
