import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { WebSocket } from 'ws';
import { CommsServer } from '../../src/server/comms/comms-server.js';
import { topicMatches } from '../../src/server/comms/topics.js';
import { createLogger } from '../../src/log.js';
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
});
