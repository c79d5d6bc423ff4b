import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { WebSocket } from 'ws';
import { CommsServer } from '../../src/server/comms/comms-server.js';
import { topicMatches } from '../../src/server/comms/topics.js';
import { createLogger } from '../../src/base/log.js';
import type { AuthService } from '../../src/auth/types.js';
import { eventually } from '../helpers/server.js';

const noAuth = { enabled: false } as AuthService;

describe('CommsServer on its own', () => {
  let server: http.Server;
  let comms: CommsServer;
  let url: string;

  before(async () => {
    server = http.createServer((_req, res) => res.end());
    const log = createLogger('warn', new Writable({ write: (_c, _e, cb) => cb() }));
    comms = new CommsServer(server, { path: '/comms', auth: noAuth, log, heartbeatMs: 100 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/comms`;
  });
  after(async () => {
    comms.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends hb to an idle editor and batches what is published', async () => {
    const ws = new WebSocket(url);
    const frames: { topic: string; data: unknown }[][] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d))));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(JSON.stringify({ subscribe: 'a/#' }));
    await eventually(() => frames.some((f) => f[0]?.topic === 'hb'));
    await eventually(() => comms.size === 1);
    for (let i = 0; i < 120; i++) comms.publish('a/b', i);
    await eventually(() => frames.flat().filter((e) => e.topic === 'a/b').length === 120);
    const batches = frames.filter((f) => f.some((e) => e.topic === 'a/b'));
    assert.ok(batches.every((f) => f.length <= 50), 'at most 50 per frame');
    assert.deepEqual(frames.flat().filter((e) => e.topic === 'a/b').map((e) => e.data), Array.from({ length: 120 }, (_, i) => i));
    comms.publish('other', 1);
    const sent = frames.length;
    await eventually(() => frames.length > sent);
    assert.ok(frames.slice(sent).flat().every((e) => e.topic === 'hb'), 'unsubscribed topics are not sent');
    ws.close();
  });

  it('matches topics as MQTT does', () => {
    assert.ok(topicMatches('notification/#', 'notification/node/added'));
    assert.ok(topicMatches('notification/#', 'notification'));
    assert.ok(topicMatches('status/+', 'status/abc'));
    assert.ok(!topicMatches('status/+', 'status/abc/def'));
    assert.ok(topicMatches('#', 'anything/at/all'));
    assert.ok(!topicMatches('debug', 'debugger'));
    assert.ok(!topicMatches('a/+/c', 'a/b'));
  });

  it('bounds what an editor that stops reading has waiting, by bytes as well as by count, and keeps the newest', async () => {
    const budget = 64 * 1024;
    const bounded = new CommsServer(server, { path: '/bounded', auth: noAuth, log: createLogger('silent'), maxQueueBytes: budget });
    const ws = new WebSocket(url.replace(/comms$/, 'bounded'));
    const received: number[] = [];
    ws.on('message', (d) => {
      for (const e of JSON.parse(String(d)) as { topic: string; data: { i: number } }[]) if (e.topic === 'debug') received.push(e.data.i);
    });
    try {
      await new Promise((resolve) => ws.once('open', resolve));
      ws.send(JSON.stringify({ subscribe: 'debug' }));
      await eventually(() => bounded.size === 1, 30_000);
      // The subscription is taken once a message on its topic comes through.
      await eventually(() => {
        bounded.publish('debug', { i: -1 });
        return received.length > 0;
      }, 30_000);
      (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
      // 5,000 messages of 2 KB: 10 MB if kept; few enough that the count bound (1,000) never applies.
      const text = 'x'.repeat(2000);
      let largest = 0;
      for (let i = 0; i < 5000; i++) {
        bounded.publish('debug', { i, text });
        largest = Math.max(largest, bounded.largestQueue);
      }
      assert.ok(largest <= budget, `at most ${budget} waiting, saw ${largest}`);
      assert.ok(bounded.dropped > 0);
      (ws as unknown as { _socket: { resume(): void } })._socket.resume();
      await eventually(() => received.at(-1) === 4999, 30_000);
      assert.ok(received.length < 5000, 'what overflowed was dropped, oldest first');
      assert.deepEqual(received.filter((i) => i >= 0), [...received.filter((i) => i >= 0)].sort((a, b) => a - b), 'in order');
    } finally {
      ws.close();
      bounded.close();
    }
  });
});
