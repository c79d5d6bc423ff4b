import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { RelayedEvents } from '../../../src/runtime/cluster/relayed-events.js';
import type { ClusterRelay, RelayMessage } from '../../../src/storage/contract.js';

/** RelayedEvents between the runtime's events and a relay that records what it publishes. */
function setup(runsHere: (id: string) => boolean = () => true, primaryOnly: (id: string) => boolean = () => false) {
  const published: { kind: string; data: any }[] = [];
  let listener: ((m: RelayMessage) => void) | undefined;
  const relay: ClusterRelay = {
    maxMessageBytes: 7000,
    publish: (kind, data) => published.push({ kind, data }),
    onMessage: (l) => {
      listener = l;
      return () => (listener = undefined);
    },
  };
  const events = new EventEmitter();
  let now = 1_000_000;
  const relayed = new RelayedEvents({ relay, events, runsHere, primaryOnly, debugMaxLength: 1000, now: () => now });
  relayed.start();
  const seen: Record<string, any[]> = { comms: [], 'node-status': [], 'runtime-event': [] };
  for (const e of Object.keys(seen)) events.on(e, (x) => seen[e]!.push(x));
  return {
    published, events, seen, relayed,
    arrive: (kind: string, data: unknown, origin = 'node1') => listener?.({ origin, kind, data }),
    advance: (ms: number) => (now += ms),
  };
}

describe('what the editors of other instances see', () => {
  it('relays local debug output and node warnings, and shows another instance\'s debug messages tagged with it, never relaying them again', () => {
    const t = setup();
    t.events.emit('comms', { topic: 'debug', data: { id: 'd1', name: 'mine', msg: 'hi', format: 'string[2]' } });
    t.events.emit('node-log', { level: 30, id: 'f1', type: 'function', msg: 'oops', path: 't1' });
    assert.deepEqual(t.published.map((p) => [p.kind, p.data.id]), [['debug', 'd1'], ['debug', 'f1']]);
    t.arrive('debug', { id: 'd2', name: 'theirs', msg: 'x' });
    t.arrive('debug', { id: 'd3', msg: 'y' });
    assert.deepEqual(t.seen.comms!.slice(1).map((e) => e.data.name), ['[node1] theirs', '[node1]']);
    assert.equal(t.published.length, 2, 'an arrival is not relayed again');
  });

  it('shows at most 100 debug messages a second per node, its local ones counted, and more in the next second', () => {
    const t = setup();
    for (let i = 0; i < 40; i++) t.events.emit('comms', { topic: 'debug', data: { id: 'd1', msg: i } });
    for (let i = 0; i < 100; i++) t.arrive('debug', { id: 'd1', msg: i });
    t.arrive('debug', { id: 'd2', msg: 'another node' });
    const remote = () => t.seen.comms!.filter((e) => e.origin);
    assert.equal(remote().length, 61);
    t.advance(1000);
    t.arrive('debug', { id: 'd1', msg: 'next second' });
    assert.equal(remote().length, 62);
  });

  it('relays at most 100 warnings a second of a node failing on every message', () => {
    const t = setup();
    for (let i = 0; i < 150; i++) t.events.emit('node-log', { level: 20, id: 'f1', type: 'function', msg: `failed ${i}`, path: 't1' });
    assert.equal(t.published.length, 100);
    t.advance(1000);
    t.events.emit('node-log', { level: 20, id: 'f1', type: 'function', msg: 'later', path: 't1' });
    assert.equal(t.published.length, 101);
  });

  it('relays a debug message too large for the relay as the start of its text', () => {
    const t = setup();
    t.events.emit('comms', { topic: 'debug', data: { id: 'd1', msg: JSON.stringify({ a: 'z'.repeat(20_000) }), format: 'Object' } });
    const sent = t.published[0]!.data;
    assert.ok(JSON.stringify(sent).length <= 7000);
    assert.match(sent.format, /^string\[\d+\]$/);
    assert.match(sent.msg, /^\{"a":"zzz.*\.\.\.$/);
  });

  it('relays only the status of nodes on primary-only tabs, and shows another instance\'s status of a node only where that node does not run', () => {
    const t = setup((id) => id === 'here', (id) => id === 'scheduler');
    t.events.emit('node-status', { id: 'here', status: { text: 'local' } });
    t.events.emit('node-status', { id: 'scheduler', status: { text: 'primary' } });
    assert.deepEqual(t.published, [{ kind: 'status', data: { id: 'scheduler', status: { text: 'primary' } } }]);
    t.arrive('status', { id: 'here', status: { text: 'theirs' } });
    t.arrive('status', { id: 'elsewhere', status: { text: 'theirs too' } });
    assert.deepEqual(t.seen['node-status']!.filter((s) => s.origin).map((s) => [s.id, s.status.text]), [['elsewhere', 'theirs too']]);
  });

  it('shows another instance\'s runtime warning as a notification of its own, closed when that instance is clear', () => {
    const t = setup();
    t.arrive('state', { state: 'stop', type: 'warning', error: 'missing-types', text: 'notification.warnings.missing-types', types: ['mqtt in'] }, 'node/2');
    t.arrive('state', { state: 'start' }, 'node/2');
    assert.deepEqual(t.seen['runtime-event']!.map((e) => [e.id, e.payload, e.retain]), [
      ['runtime-state-node_2', { type: 'warning', text: 'node/2: flows stopped, node types missing: mqtt in' }, true],
      ['runtime-state-node_2', {}, true],
    ]);
  });

  it('stops relaying once stopped', () => {
    const t = setup();
    t.relayed.stop();
    t.events.emit('comms', { topic: 'debug', data: { id: 'd1' } });
    assert.deepEqual(t.published, []);
  });
});
