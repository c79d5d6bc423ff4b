import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { PgRelay } from '../../../src/storage/postgres/relay.js';
import type { RelayMessage } from '../../../src/storage/contract.js';
import { captureLog } from '../../helpers/log.js';

/** The relay's NOTIFY side with the database replaced by a recorder; the payloads it would send are fed back to a listener. */
function relayWith(notify: (payload: string) => Promise<void>) {
  const sent: string[] = [];
  const relay = new PgRelay(async (channel, payload) => {
    assert.equal(channel, 'runnel_relay');
    sent.push(payload);
    await notify(payload);
  }, 'runnel', 'node1', captureLog().log);
  return { relay, sent };
}

async function settle(sent: string[], count: number): Promise<void> {
  for (let i = 0; i < 100 && sent.length < count; i++) await tick();
}

describe('cluster relay on PostgreSQL NOTIFY', () => {
  it('packs the messages of one tick into payloads PostgreSQL accepts, in order, and delivers them to another instance', async () => {
    const { relay, sent } = relayWith(async () => undefined);
    const data = 'x'.repeat(1000);
    for (let i = 0; i < 30; i++) relay.publish('debug', { i, data });
    await settle(sent, 4);
    await tick();
    assert.ok(sent.length >= 4, `${sent.length} payloads`);
    for (const p of sent) assert.ok(Buffer.byteLength(p) < 8000, `payload of ${Buffer.byteLength(p)} bytes`);
    const other = new PgRelay(async () => undefined, 'runnel', 'node2', captureLog().log);
    const got: RelayMessage[] = [];
    other.onMessage((m) => got.push(m));
    for (const p of sent) other.deliver(p);
    assert.deepEqual(got.map((m) => (m.data as { i: number }).i), Array.from({ length: 30 }, (_, i) => i));
    assert.ok(got.every((m) => m.origin === 'node1' && m.kind === 'debug'));
  });

  it('ignores its own payloads and drops a message too large for one NOTIFY', async () => {
    const { relay, sent } = relayWith(async () => undefined);
    const got: RelayMessage[] = [];
    relay.onMessage((m) => got.push(m));
    relay.publish('debug', { big: 'y'.repeat(relay.maxMessageBytes + 1000) });
    relay.publish('debug', { small: true });
    await settle(sent, 1);
    assert.equal(sent.length, 1);
    assert.deepEqual(JSON.parse(sent[0]!).m, [{ k: 'debug', d: { small: true } }]);
    relay.deliver(sent[0]!);
    assert.deepEqual(got, []);
  });

  it('drops a batch the database refused instead of sending it twice, and sends what comes after', async () => {
    let fail = true;
    const { relay, sent } = relayWith(async () => {
      if (fail) throw new Error('connection refused');
    });
    relay.publish('debug', { n: 1 });
    await settle(sent, 1);
    await tick();
    fail = false;
    relay.publish('debug', { n: 2 });
    await settle(sent, 2);
    await tick();
    assert.deepEqual(sent.map((p) => JSON.parse(p).m[0].d.n), [1, 2]);
  });
});
