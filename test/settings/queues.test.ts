import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveSettings, SettingsError } from '../../src/settings/settings.js';

/** `queues` in the settings file: defaults, a lower bound of one's own, and clear refusals. */
describe('queues settings', () => {
  const queues = (v: unknown) => resolveSettings({ queues: v }, '/', undefined, {}).queues;

  it('fills in the defaults and takes whole numbers within the limits', () => {
    assert.equal(queues(undefined).maxLength, 100_000);
    assert.deepEqual(queues({ leaseMs: 3000 }), { ...queues(undefined), leaseMs: 3000 });
    assert.equal(queues(undefined).backoffMs, 1000);
    assert.equal(queues({ backoffMs: 20 }).backoffMs, 20);
  });

  it('refuses what is not a setting, out of its limits or not a whole number, naming it', () => {
    const refused = (v: unknown, message: RegExp) => assert.throws(() => queues(v), (e: unknown) => e instanceof SettingsError && message.test(e.message));
    refused('fast', /queues must be an object/);
    refused([], /queues must be an object/);
    refused({ leaseMS: 3000 }, /queues\.leaseMS is not a setting \(leaseMs, /);
    refused({ leaseMs: 5 }, /queues\.leaseMs must be a whole number between 100 and 3600000/);
    refused({ pollMs: 1.5 }, /queues\.pollMs must be a whole number/);
    refused({ maxLength: '10' }, /queues\.maxLength must be a whole number/);
  });
});
