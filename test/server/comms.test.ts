import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adminAuth, eventually, login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { copyFixture } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { Editor } from '../helpers/comms.js';
import { fakeClock } from '../helpers/clock.js';

const debugFlow = [
  { id: 't1', type: 'tab', label: 'T' },
  { id: 'inj', type: 'inject', z: 't1', props: [{ p: 'payload', v: '', vt: 'date' }], wires: [['fn']] },
  {
    id: 'fn',
    type: 'function',
    z: 't1',
    func: 'const o = {name: "loop"}; o.self = o; node.send({payload: Buffer.from([1, 2, 255])}); node.send({payload: o}); node.status({fill: "green", shape: "dot", text: "sent"}); return null;',
    outputs: 1,
    wires: [['dbg']],
  },
  { id: 'dbg', type: 'debug', z: 't1', active: true, tosidebar: true, complete: 'payload', wires: [] },
];

describe('/comms with adminAuth', { timeout: 60_000 }, () => {
  let server: TestServer;
  let token: string;
  const open: Editor[] = [];
  const editor = () => {
    const e = new Editor(server.url);
    open.push(e);
    return e;
  };

  before(async () => {
    server = await startServer({ adminAuth: adminAuth() });
    token = await login(server);
  });
  after(async () => {
    for (const e of open) e.close();
    await server.dispose();
  });

  it('accepts a valid token, then delivers retained deploy and state notifications on subscribe', async () => {
    const e = editor();
    await e.send({ auth: token });
    await eventually(() => e.frames.some((f) => (f as { auth?: string }).auth === 'ok'));
    await e.send({ subscribe: 'notification/#' });
    const [deploy] = await e.waitFor('notification/runtime-deploy');
    assert.equal(deploy.data.revision, server.instance.runtime.rev);
    const [state] = await e.waitFor('notification/runtime-state');
    assert.equal(state.data.state, 'start');
  });

  it('answers a wrong token, or anything before the token, with auth fail and closes', async () => {
    const wrong = editor();
    await wrong.send({ auth: 'not-a-token' });
    await eventually(() => wrong.closed);
    assert.deepEqual(wrong.frames, [{ auth: 'fail' }]);
    const early = editor();
    await early.send({ subscribe: 'debug' });
    await eventually(() => early.closed);
    assert.deepEqual(early.frames, [{ auth: 'fail' }]);
  });

  it('stops sending to an editor whose session was revoked at once, then tells it its auth failed', async () => {
    const mine = await login(server);
    const e = editor();
    await e.send({ auth: mine });
    await eventually(() => e.frames.length === 1);
    await e.send({ subscribe: 'debug' });
    await deploy(server, debugFlow, { token });
    const comms = server.instance.app.comms!;
    const others = comms.receiving - 1;
    const watcher = editor();
    await watcher.send({ auth: token });
    await watcher.send({ subscribe: 'debug' });
    await eventually(() => comms.receiving === others + 2);
    assert.equal((await request(server.at('auth/revoke'), { method: 'POST', json: { token: mine }, token: mine })).status, 200);
    // The token check runs each second; from then on the revoked editor gets nothing.
    await eventually(() => comms.receiving === others + 1, 10_000);
    const before = e.frames.length;
    assert.equal((await request(server.at('inject/inj'), { method: 'POST', json: {}, token })).status, 200);
    await watcher.waitFor('debug', 2);
    assert.deepEqual(e.frames.slice(before).filter((f) => !(f as { auth?: string }).auth), []);
    await eventually(() => e.closed, 10_000);
    assert.deepEqual(e.frames.at(-1), { auth: 'fail' });
  });

  it('publishes debug messages in Node-RED\'s encoding and status by wildcard, retained for late editors', async () => {
    const e = editor();
    await e.send({ auth: token });
    await e.send({ subscribe: 'debug' });
    await e.send({ subscribe: 'status/+' });
    await deploy(server, debugFlow, { token });
    assert.equal((await request(server.at('inject/inj'), { method: 'POST', json: {}, token })).status, 200);
    const [buffer, circular] = await e.waitFor('debug', 2);
    assert.equal(buffer.data.format, 'buffer[3]');
    assert.equal(buffer.data.msg, '0102ff');
    assert.equal(buffer.data.id, 'dbg');
    assert.equal(buffer.data.property, 'payload');
    assert.equal(circular.data.format, 'Object');
    assert.deepEqual(JSON.parse(circular.data.msg), { name: 'loop', self: '[Circular ~]' });
    const [status] = await e.waitFor('status/fn');
    assert.deepEqual(status.data, { fill: 'green', shape: 'dot', text: 'sent' });
    const late = editor();
    await late.send({ auth: token });
    await late.send({ subscribe: 'status/#' });
    assert.deepEqual((await late.waitFor('status/fn'))[0].data, status.data);
    assert.equal(late.on('debug').length, 0, 'only what was subscribed');
  });

  it('tells the palette about modules being installed, enabled and disabled, with npm\'s output in the event log', async () => {
    const e = editor();
    await e.send({ auth: token });
    await e.send({ subscribe: 'notification/node/#' });
    await e.send({ subscribe: 'event-log/#' });
    const work = await tempDir('runnel-comms-');
    try {
      const dir = await copyFixture('node-red-contrib-shout', work);
      assert.equal((await request(server.at('nodes'), { method: 'POST', json: { module: dir }, token })).status, 200);
      const [added] = await e.waitFor('notification/node/added');
      assert.deepEqual(added.data.map((s: { id: string }) => s.id), ['node-red-contrib-shout/shout']);
      await eventually(() => e.entries.some((x) => x.topic.startsWith('event-log/') && /added \d+ package/.test(x.data.data)));
    } finally {
      await removeDir(work);
    }
    assert.equal((await request(server.at('nodes/node-red/exec'), { method: 'PUT', json: { enabled: false }, token })).status, 200);
    assert.equal((await request(server.at('nodes/node-red/exec'), { method: 'PUT', json: { enabled: true }, token })).status, 200);
    const [disabled] = await e.waitFor('notification/node/disabled');
    assert.equal(disabled.data.id, 'node-red/exec');
    assert.deepEqual((await e.waitFor('notification/node/enabled'))[0].data.types, ['exec']);
  });

  it('bounds the queue of an editor that never reads', async () => {
    const comms = server.instance.app.comms!;
    const slow = editor();
    await slow.send({ auth: token });
    await eventually(() => slow.frames.length === 1);
    await slow.send({ subscribe: 'debug' });
    await eventually(() => comms.size >= 1);
    // Stop reading: the server's socket buffer fills, then its queue for this client.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = 'x'.repeat(2000);
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 50_000; i++) server.instance.runtime.events.emit('comms', { topic: 'debug', data: { msg: big, i } });
    await eventually(() => comms.dropped > 0);
    assert.ok(comms.longestQueue <= 1000, `queue ${comms.longestQueue}`);
    assert.ok(comms.largestQueue <= 1024 * 1024, `queued ${comms.largestQueue}`);
    // 50,000 × 2 KB would be 100 MB if kept; the bound keeps it to a few MB.
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 60 * 1024 * 1024);
  });
});

describe('/comms when the session expires', { timeout: 60_000 }, () => {
  it('tells the editor its auth failed once the token expires', async () => {
    // The token expires on this clock, not after a real wait; the socket's periodic check notices it.
    const clock = fakeClock();
    const server = await startServer({ adminAuth: adminAuth({ sessionExpiryTime: 1 }) }, undefined, { clock });
    const e = new Editor(server.url);
    try {
      await e.send({ auth: await login(server) });
      await eventually(() => e.frames.length >= 1);
      assert.deepEqual(e.frames[0], { auth: 'ok' });
      assert.equal(e.closed, false);
      clock.advance(1001);
      await eventually(() => e.closed, 10_000);
      assert.deepEqual(e.frames.at(-1), { auth: 'fail' });
    } finally {
      e.close();
      await server.dispose();
    }
  });
});

describe('/comms without adminAuth', { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => server.dispose());

  it('needs no handshake and serves 200 editors at once', async () => {
    const editors = Array.from({ length: 200 }, () => new Editor(server.url));
    try {
      await Promise.all(editors.map((e) => e.send({ subscribe: 'debug' })));
      await eventually(() => server.instance.app.comms!.size === 200);
      // Subscriptions are handled in order per connection; one round trip proves each was taken.
      await Promise.all(editors.map((e) => e.send({ subscribe: 'notification/runtime-deploy' })));
      await Promise.all(editors.map((e) => e.waitFor('notification/runtime-deploy')));
      server.instance.runtime.events.emit('comms', { topic: 'debug', data: { msg: 'to all' } });
      await Promise.all(editors.map((e) => e.waitFor('debug')));
      assert.ok(editors.every((e) => e.frames.every((f) => Array.isArray(f))), 'no auth frames');
    } finally {
      for (const e of editors) e.close();
    }
  });
});
