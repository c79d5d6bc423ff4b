import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { startServer, eventually, type TestServer } from '../../helpers/server.js';
import { installCapture, type Capture } from '../../helpers/capture.js';
import { refusedPort } from '../../helpers/ports.js';
import { deployListening } from './listening.js';
import { node, receiver, type Conf } from '../flow.js';
import { deploy } from '../../helpers/deploy.js';

const tab = { id: 't1', type: 'tab', label: 'tcp' };
const cap = (id: string) => node(id, 'test-capture');


/** Connects to a port on 127.0.0.1 and collects what comes back as text. */
async function dial(port: number): Promise<{ socket: net.Socket; text: () => string }> {
  for (let i = 0; ; i++) {
    try {
      const socket = net.connect(port, '127.0.0.1');
      await once(socket, 'connect');
      let got = '';
      socket.on('data', (d) => (got += d));
      return { socket, text: () => got };
    } catch (err) {
      if (i > 50) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A peer server on 127.0.0.1 that runs `onSocket` for each connection. */
async function peerServer(onSocket: (s: net.Socket) => void, port = 0): Promise<{ server: net.Server; port: number; sockets: Set<net.Socket> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    onSocket(s);
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port, sockets };
}

describe('tcp nodes', () => {
  let server: TestServer;
  let capture: Capture;
  const receive = receiver(() => server);
  before(async () => {
    server = await startServer({ socketReconnectTime: 200 });
    capture = installCapture(server);
  });
  after(() => server.dispose());

  test('tcp in server: delimiter, single and stream modes; tcp out replies to the session', async () => {
    const [p1, p2, p3] = await deployListening(server, 3, ([p1, p2, p3]) => [
      tab,
      node('lines', 'tcp in', { server: 'server', host: '', port: String(p1), datamode: 'stream', datatype: 'utf8', newline: '\\n', topic: 'tcp', trim: false, base64: false, tls: '' }, [['lines-got', 'upper']]),
      cap('lines-got'),
      node('upper', 'function', { func: 'msg.payload = msg.payload.toUpperCase() + "\\n"; return msg;', outputs: 1 }, [['reply']]),
      node('reply', 'tcp out', { host: '', port: '', beserver: 'reply', base64: false, end: false, tls: '' }, []),
      node('single', 'tcp in', { server: 'server', host: '', port: String(p2), datamode: 'single', datatype: 'utf8', newline: '', topic: '' }, [['single-got']]), cap('single-got'),
      node('raw', 'tcp in', { server: 'server', host: '', port: String(p3), datamode: 'stream', datatype: 'buffer', newline: '' }, [['raw-got']]), cap('raw-got'),
    ]) as [number, number, number];
    const a = await dial(p1);
    a.socket.write('one\ntwo\nthr');
    a.socket.write('ee\nrest');
    await eventually(() => a.text() === 'ONE\nTWO\nTHREE\n');
    a.socket.end();
    const got = await capture.waitFor('lines-got', 4);
    assert.deepEqual(got.map((m) => m.payload), ['one', 'two', 'three', 'rest']);
    assert.equal(got[0].topic, 'tcp');
    assert.match(got[0].ip, /127\.0\.0\.1$/);
    assert.equal(got[0]._session.type, 'tcp');
    assert.equal(typeof got[0].port, 'number');

    const b = await dial(p2);
    b.socket.write('hello ');
    await new Promise((r) => setTimeout(r, 20));
    b.socket.end('world');
    const [single] = await capture.waitFor('single-got');
    assert.equal(single.payload, 'hello world');

    const c = await dial(p3);
    c.socket.write(Buffer.from([1, 2, 3]));
    const [raw] = await capture.waitFor('raw-got');
    assert.ok(Buffer.isBuffer(raw.payload));
    assert.deepEqual([...raw.payload], [1, 2, 3]);
    c.socket.destroy();
  });

  test('tcp in client reconnects; tcp out client writes and tcp out server broadcasts', async () => {
    const fromRunnel: string[] = [];
    const feed = await peerServer((s) => {
      s.write('hi from peer');
      s.on('data', (d) => fromRunnel.push(d.toString()));
    });
    const sink = await peerServer((s) => s.on('data', (d) => fromRunnel.push(`sink:${d}`)));
    const [outPort] = await deployListening(server, 1, ([outPort]) => [
      tab,
      node('cin', 'tcp in', { server: 'client', host: '127.0.0.1', port: String(feed.port), datamode: 'stream', datatype: 'utf8', newline: '' }, [['cin-got', 'back']]), cap('cin-got'),
      node('back', 'tcp out', { beserver: 'reply' }, []),
      node('cout', 'tcp out', { beserver: 'client', host: '127.0.0.1', port: String(sink.port), end: false }, []),
      node('sout', 'tcp out', { beserver: 'server', host: '', port: String(outPort), end: false, base64: true }, []),
    ]) as [number];
    const [first] = await capture.waitFor('cin-got');
    assert.equal(first.payload, 'hi from peer');
    await eventually(() => fromRunnel.includes('hi from peer'), 5000);
    for (const s of feed.sockets) s.destroy();
    await capture.waitFor('cin-got', 2, 5000);
    assert.notEqual(capture.of('cin-got')[1]._session.id, first._session.id, 'a new connection is a new session');

    await eventually(() => sink.sockets.size === 1);
    receive('cout', { payload: 'to sink' });
    await eventually(() => fromRunnel.includes('sink:to sink'));

    const [x, y] = [await dial(outPort), await dial(outPort)];
    await new Promise((r) => setTimeout(r, 50));
    receive('sout', { payload: Buffer.from('everyone').toString('base64') });
    await eventually(() => x.text() === 'everyone' && y.text() === 'everyone');
    x.socket.destroy();
    y.socket.destroy();
    await deploy(server, [tab]);
    feed.server.close();
    sink.server.close();
    for (const s of [...feed.sockets, ...sink.sockets]) s.destroy();
  });

  test('tcp request: time, count, character, immediate and stay-connected modes; a refused connection is an error', async () => {
    const heard: string[] = [];
    const echo = await peerServer((s) => s.on('data', (d) => {
      heard.push(d.toString());
      s.write(`echo:${d}\nsecond\n`);
    }));
    const closed = await refusedPort();
    const req = (id: string, extra: Conf) => node(id, 'tcp request', { server: '127.0.0.1', port: String(echo.port), out: 'time', ret: 'string', splitc: '0', newline: '', trim: false, tls: '', ...extra }, [[`${id}-got`]]);
    await deploy(server, [
      tab,
      req('time', { out: 'time', splitc: '50' }), cap('time-got'),
      req('count', { out: 'count', splitc: '4', ret: 'buffer' }), cap('count-got'),
      req('char', { out: 'char', splitc: '\\n' }), cap('char-got'),
      req('immed', { out: 'immed' }), cap('immed-got'),
      req('sit', { out: 'sit', newline: '\\n' }), cap('sit-got'),
      node('refused', 'tcp request', { server: '127.0.0.1', port: String(closed), out: 'time', splitc: '0' }, [[]]),
      node('catch', 'catch', { scope: ['refused'], uncaught: false }, [['errors']]), cap('errors'),
    ]);
    receive('time', { payload: 'a', topic: 'keep' });
    const [t] = await capture.waitFor('time-got');
    assert.equal(t.payload, 'echo:a\nsecond\n');
    assert.equal(t.topic, 'keep', 'the reply is a copy of the request message');
    receive('count', { payload: 'b' });
    const [c] = await capture.waitFor('count-got');
    assert.deepEqual(c.payload, Buffer.from('echo'));
    receive('char', { payload: 'c' });
    assert.equal((await capture.waitFor('char-got'))[0].payload, 'echo:c\n');
    receive('immed', { payload: 'd' });
    await eventually(() => heard.includes('d'));
    receive('sit', { payload: 'e' });
    await capture.waitFor('sit-got', 2);
    receive('sit', { payload: 'f' });
    const sit = await capture.waitFor('sit-got', 4);
    assert.deepEqual(sit.map((m) => m.payload), ['echo:e', 'second', 'echo:f', 'second']);
    receive('sit', { reset: true });
    await eventually(() => echo.sockets.size === 0);
    assert.deepEqual(capture.of('immed-got'), []);
    receive('refused', { payload: 'x' });
    const [e] = await capture.waitFor('errors');
    assert.equal(e.error.message, `connect failed 127.0.0.1:${closed}`);
    await deploy(server, [tab]);
    echo.server.close();
  });
});
