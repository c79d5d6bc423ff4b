import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoginGate } from '../../src/auth/login-gate.js';

test('shed refuses the waiting login whose address failed most, never one from a known address', async () => {
  let open!: () => void;
  // One slot, opened by the test: everyone waits in line until then.
  const gate = new LoginGate(async () => 1000, () => new Promise<void>((r) => (open = r)));
  const entered: string[] = [];
  const enter = (name: string, rank: number) => gate.enter('admin', async () => rank).then(() => entered.push(name));
  const known = enter('known', -1);
  const twice = enter('failed twice', 2);
  const once = enter('failed once', 1);
  await new Promise((r) => setImmediate(r));
  assert.equal(gate.shed(new Error('crowded out'), -1), true);
  await assert.rejects(twice, /crowded out/);
  assert.equal(gate.shed(new Error('crowded out'), -1), true);
  await assert.rejects(once, /crowded out/);
  assert.equal(gate.shed(new Error('crowded out'), -1), false, 'the known address keeps its place');
  open();
  await known;
  assert.deepEqual(entered, ['known']);
});
