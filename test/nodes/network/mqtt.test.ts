import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, eventually, type TestServer } from '../../helpers/server.js';
import { installCapture, type Capture } from '../../helpers/capture.js';
import { startAedes, brokerHeard, closePeers, peer, collect, TLS_DIR, type TestBroker } from '../../helpers/mqtt.js';
import { node, receiver, type Conf } from '../flow.js';
import { deploy } from '../../helpers/deploy.js';

const tab = { id: 't1', type: 'tab', label: 'mqtt' };
const brokerNode = (port: number, extra: Conf = {}) =>
  ({ id: 'b1', type: 'mqtt-broker', name: 'local', broker: '127.0.0.1', port: String(port), clientid: '', autoConnect: true, usetls: false, protocolVersion: '4', keepalive: '60', cleansession: true, autoUnsubscribe: true, ...extra });
const mqttIn = (id: string, topic: string, extra: Conf = {}) => node(id, 'mqtt in', { topic, qos: '2', datatype: 'auto-detect', broker: 'b1', nl: false, rap: true, rh: 0, inputs: 0, ...extra }, [[`${id}-got`]]);
const mqttOut = (id: string, extra: Conf = {}) => node(id, 'mqtt out', { topic: '', qos: '', retain: '', broker: 'b1', ...extra }, []);
const cap = (id: string) => node(id, 'test-capture');
const errors = [node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]), cap('errors')];


describe('mqtt nodes against an aedes broker', () => {
  let broker: TestBroker;
  let server: TestServer;
  let capture: Capture;
  const receive = receiver(() => server);

  before(async () => {
    broker = await startAedes();
    server = await startServer({ mqttReconnectTime: 200 });
    capture = installCapture(server);
  });
  after(async () => {
    await closePeers();
    await server.dispose();
    await broker.close();
  });

  test('mqtt out publishes and mqtt in receives at QoS 0, 1 and 2, with Node-RED\'s message shape', async () => {
    const outside = await peer(broker.port);
    const seen = collect(outside);
    await outside.subscribeAsync('from/runnel/#', { qos: 2 });
    await deploy(server, [
      tab, brokerNode(broker.port),
      mqttIn('in0', 'to/runnel/0', { qos: '0' }), mqttIn('in1', 'to/runnel/1', { qos: '1' }), mqttIn('in2', 'to/runnel/2', { qos: '2', datatype: 'utf8' }),
      cap('in0-got'), cap('in1-got'), cap('in2-got'),
      mqttOut('out'), mqttOut('out-fixed', { topic: 'from/runnel/fixed', qos: '2', retain: 'true' }),
      node('st', 'status', { scope: ['in0'] }, [['statuses']]), cap('statuses'), ...errors,
    ]);
    await eventually(() => capture.of('statuses').some((m) => m.status.text === 'node-red:common.status.connected'));
    for (const q of [0, 1, 2]) await outside.publishAsync(`to/runnel/${q}`, JSON.stringify({ q }), { qos: q as 0 | 1 | 2 });
    const [m0] = await capture.waitFor('in0-got');
    assert.deepEqual({ ...m0, _msgid: undefined }, { _msgid: undefined, topic: 'to/runnel/0', payload: { q: 0 }, qos: 0, retain: false, _topic: 'to/runnel/0' });
    assert.equal((await capture.waitFor('in1-got'))[0].qos, 1);
    const [m2] = await capture.waitFor('in2-got');
    assert.equal(m2.qos, 2);
    assert.equal(m2.payload, '{"q":2}', 'utf8 datatype keeps the text');

    receive('out', { topic: 'from/runnel/a', payload: { n: 1 }, qos: 1 });
    receive('out', { topic: 'from/runnel/b', payload: 42 });
    receive('out-fixed', { topic: 'ignored', payload: Buffer.from([1, 2, 3]) });
    await eventually(() => seen.all.length === 3);
    assert.deepEqual(seen.on('from/runnel/a'), ['{"n":1}']);
    assert.equal(seen.all.find((m) => m.topic === 'from/runnel/a')!.packet.qos, 1);
    assert.deepEqual(seen.on('from/runnel/b'), ['42']);
    const fixed = seen.all.find((m) => m.topic === 'from/runnel/fixed')!;
    assert.equal(fixed.packet.qos, 2);
    assert.deepEqual([...Buffer.from(fixed.payload)], [1, 2, 3]);
    receive('out', { topic: 'bad/#', payload: 'x' });
    receive('out', { payload: 'no topic' });
    await eventually(() => server.logs.some((l) => l.includes('Invalid topic specified')));
    assert.equal(seen.all.length, 3);
    await outside.endAsync();
  });

  test('retained messages reach a subscriber deployed later, with retain true', async () => {
    const outside = await peer(broker.port);
    await outside.publishAsync('retained/x', 'kept', { qos: 1, retain: true });
    await deploy(server, [tab, brokerNode(broker.port), mqttIn('r', 'retained/#'), cap('r-got')]);
    const [m] = await capture.waitFor('r-got');
    assert.equal(m.payload, 'kept');
    assert.equal(m.retain, true);
    await outside.publishAsync('retained/x', '', { qos: 1, retain: true });
    await outside.endAsync();
  });

  test('birth on connect, close on a clean stop, will when the connection is lost', async () => {
    const outside = await peer(broker.port);
    const seen = collect(outside);
    await outside.subscribeAsync('state/#', { qos: 1 });
    const withMessages = brokerNode(broker.port, {
      clientid: 'runnel-lw', birthTopic: 'state/birth', birthPayload: 'hello', birthQos: '1', birthRetain: 'false',
      closeTopic: 'state/close', closePayload: 'bye', closeQos: '1', closeRetain: 'false',
      willTopic: 'state/will', willPayload: 'lost', willQos: '1', willRetain: 'false',
    });
    await deploy(server, [tab, withMessages, mqttOut('o')]);
    await eventually(() => seen.on('state/birth').length === 1);
    assert.deepEqual(seen.on('state/birth'), ['hello']);
    const client = broker.aedes as any;
    await eventually(() => client.clients['runnel-lw']);
    client.clients['runnel-lw'].conn.destroy();
    await eventually(() => seen.on('state/will').length === 1);
    // After the reconnect the birth message is sent again.
    await eventually(() => seen.on('state/birth').length === 2, 5000);
    await deploy(server, [tab]);
    await eventually(() => seen.on('state/close').length === 1);
    assert.deepEqual(seen.on('state/close'), ['bye']);
    await outside.endAsync();
  });

  test('dynamic subscriptions: subscribe, getSubscriptions, unsubscribe, disconnect and connect actions', async () => {
    const outside = await peer(broker.port);
    await deploy(server, [
      tab, brokerNode(broker.port), mqttIn('dyn', '', { inputs: 1 }), cap('dyn-got'),
      node('done', 'complete', { scope: ['dyn'], uncaught: false }, [['completed']]), cap('completed'), ...errors,
    ]);
    const subscribed = brokerHeard(broker.aedes, 'subscribe', ['dyn/a', 'dyn/b/+']);
    receive('dyn', { action: 'subscribe', topic: [{ topic: 'dyn/a', qos: 1 }, 'dyn/b/+'] });
    const [completed] = await capture.waitFor('completed');
    await eventually(subscribed);
    assert.deepEqual(completed.subscriptions, [{ topic: 'dyn/a', qos: 1 }, { topic: 'dyn/b/+', qos: 2 }]);
    await outside.publishAsync('dyn/a', '1', { qos: 1 });
    await outside.publishAsync('dyn/b/c', '2', { qos: 1 });
    await capture.waitFor('dyn-got', 2);
    receive('dyn', { action: 'getSubscriptions' });
    const list = (await capture.waitFor('dyn-got', 3))[2];
    assert.equal(list.topic, 'subscriptions');
    assert.deepEqual(list.payload.map((s: any) => s.topic), ['dyn/a', 'dyn/b/+']);
    const unsubscribed = brokerHeard(broker.aedes, 'unsubscribe', ['dyn/a']);
    receive('dyn', { action: 'unsubscribe', topic: 'dyn/a' });
    await capture.waitFor('completed', 3);
    await eventually(unsubscribed);
    await outside.publishAsync('dyn/a', 'not delivered', { qos: 1 });
    await outside.publishAsync('dyn/b/d', '3', { qos: 1 });
    const got = await capture.waitFor('dyn-got', 4);
    assert.deepEqual(got.map((m) => m.payload), [1, 2, list.payload, 3]);

    receive('dyn', { action: 'disconnect' });
    await capture.waitFor('completed', 4);
    assert.equal((server.instance.runtime.services.nodes.get('b1') as any).connected, false);
    const resubscribed = brokerHeard(broker.aedes, 'subscribe', ['dyn/b/+']);
    receive('dyn', { action: 'connect' });
    await capture.waitFor('completed', 5);
    await eventually(resubscribed);
    await outside.publishAsync('dyn/b/e', '4', { qos: 1 });
    assert.equal((await capture.waitFor('dyn-got', 5))[4].payload, 4, 'subscriptions survive a disconnect/connect');

    receive('dyn', { action: 'connect', broker: { port: broker.port } });
    receive('dyn', { action: 'nonsense' });
    receive('dyn', { action: 'subscribe', topic: 'bad/#/x' });
    receive('dyn', { action: 'subscribe', topic: 5 });
    const errs = await capture.waitFor('errors', 4);
    assert.deepEqual(errs.map((e) => e.error.message).sort(), ['Error: Disconnect from broker before connecting', 'Error: Invalid action specified', 'Error: Invalid topic specified', 'Error: msg.topic is missing or invalid']);
    const forced = brokerHeard(broker.aedes, 'subscribe', ['dyn/b/+']);
    receive('dyn', { action: 'connect', broker: { port: broker.port, force: true } });
    await capture.waitFor('completed', 6);
    await eventually(forced);
    await outside.publishAsync('dyn/b/f', '5', { qos: 1 });
    assert.equal((await capture.waitFor('dyn-got', 6))[5].payload, 5);
    await outside.endAsync();
  });

  test('after a broker restart the client reconnects and subscribes again', async () => {
    await deploy(server, [tab, brokerNode(broker.port), mqttIn('rs', 'restart/#', { qos: '1' }), cap('rs-got'), node('st', 'status', { scope: ['rs'] }, [['rs-status']]), cap('rs-status')]);
    await eventually(() => capture.of('rs-status').some((m) => m.status.text === 'node-red:common.status.connected'));
    await broker.stop();
    await eventually(() => capture.of('rs-status').some((m) => m.status.text === 'node-red:common.status.disconnected'));
    await broker.restart();
    const outside = await peer(broker.port);
    await eventually(async () => {
      await outside.publishAsync('restart/now', 'back', { qos: 1 });
      return capture.of('rs-got').length > 0;
    }, 10_000, 300);
    assert.equal(capture.of('rs-got')[0].payload, 'back');
    assert.equal(capture.of('rs-status').at(-1)!.status.text, 'node-red:common.status.connected');
    await outside.endAsync();
  });

  test('no QoS 1 message is lost across a nodes deploy that changes the function between mqtt in and mqtt out', async () => {
    const flows = (code: string, label: string) => [
      tab, brokerNode(broker.port),
      mqttIn('src', 'flow/in', { qos: '1' }),
      node('fn', 'function', { func: code, outputs: 1 }, [['dst']]),
      mqttOut('dst', { topic: 'flow/out', qos: '1' }),
      node('other', 'inject', { props: [], repeat: '', once: false, name: label }, [[]]),
    ].map((n: Conf) => (n.id === 'src' ? { ...n, wires: [['fn']] } : n));
    await deploy(server, flows('return msg;', 'one'));
    const outside = await peer(broker.port);
    const seen = collect(outside);
    await outside.subscribeAsync('flow/out', { qos: 1 });
    const N = 600;
    const publishing = (async () => {
      for (let i = 0; i < N; i++) {
        await outside.publishAsync('flow/in', String(i), { qos: 1 });
        if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await eventually(() => seen.all.length > 50);
    await deploy(server, flows('msg.payload = msg.payload; return msg;', 'one'), { type: 'nodes' });
    await deploy(server, flows('msg.payload = msg.payload; return msg;', 'two'), { type: 'nodes' });
    await publishing;
    await eventually(() => seen.all.length >= N, 60_000);
    const got = new Set(seen.on('flow/out'));
    const missing = Array.from({ length: N }, (_, i) => String(i)).filter((i) => !got.has(i));
    assert.deepEqual(missing, []);
    await outside.endAsync();
  });

  test('a burst of QoS 0 messages is all published and every message completes', async () => {
    const outside = await peer(broker.port);
    const seen = collect(outside);
    await outside.subscribeAsync('burst', { qos: 0 });
    await deploy(server, [
      tab, brokerNode(broker.port), mqttOut('bo', { topic: 'burst', qos: '0' }),
      node('bdone', 'complete', { scope: ['bo'], uncaught: false }, [['bcompleted']]), cap('bcompleted'),
      node('bst', 'status', { scope: ['bo'] }, [['bo-status']]), cap('bo-status'),
    ]);
    await eventually(() => capture.of('bo-status').some((m) => m.status.text === 'node-red:common.status.connected'));
    const N = 5000;
    const big = 'x'.repeat(2000);
    for (let i = 0; i < N; i++) receive('bo', { payload: `${i}:${big}` });
    await capture.waitFor('bcompleted', N, 20_000);
    await eventually(() => seen.all.length === N, 20_000);
    await outside.endAsync();
  });

  test('a missing broker configuration and an invalid topic are reported', async () => {
    await deploy(server, [tab, node('lost', 'mqtt in', { topic: 'x', broker: 'nowhere' }, []), node('bad', 'mqtt in', { topic: 'a/#/b', broker: 'b1' }, []), brokerNode(broker.port)]);
    await eventually(() => server.logs.some((l) => l.includes('missing broker configuration')));
    await eventually(() => server.logs.some((l) => l.includes('Invalid topic specified')));
  });
});

describe('mqtt-broker with user credentials and TLS through tls-config', () => {
  let broker: TestBroker;
  let server: TestServer;
  let capture: Capture;
  before(async () => {
    broker = await startAedes({ tls: true, auth: { username: 'dev', password: 's3cret' } });
    server = await startServer({ mqttReconnectTime: 200 });
    capture = installCapture(server);
  });
  after(async () => {
    await closePeers();
    await server.dispose();
    await broker.close();
  });

  const flows = (password: string, tlsExtra: Conf) => [
    tab,
    { id: 'tls1', type: 'tls-config', name: '', cert: '', key: '', ca: '', certname: '', keyname: '', caname: '', servername: '', verifyservercert: true, alpnprotocol: '', ...tlsExtra },
    brokerNode(broker.port, { usetls: true, tls: 'tls1', credentials: { user: 'dev', password } }),
    mqttIn('sec', 'secure/#'), cap('sec-got'), node('st', 'status', { scope: ['sec'] }, [['sec-status']]), cap('sec-status'),
  ];

  test('with the CA from a file and the right password it connects and receives', async () => {
    await deploy(server, flows('s3cret', { ca: path.join(TLS_DIR, 'ca.crt') }));
    await eventually(() => capture.of('sec-status').some((m) => m.status.text === 'node-red:common.status.connected'));
    const outside = await peer(broker.port, { protocol: 'mqtts', ca: readFileSync(path.join(TLS_DIR, 'ca.crt')), username: 'dev', password: 's3cret' } as never);
    await outside.publishAsync('secure/a', 'over tls', { qos: 1 });
    assert.equal((await capture.waitFor('sec-got'))[0].payload, 'over tls');
    await outside.endAsync();
  });

  test('the CA given as uploaded credential text works the same', async () => {
    capture.messages.clear();
    await deploy(server, flows('s3cret', { credentials: { cadata: readFileSync(path.join(TLS_DIR, 'ca.crt'), 'utf8') } }));
    await eventually(() => capture.of('sec-status').some((m) => m.status.text === 'node-red:common.status.connected'));
  });

  test('a wrong password or an unknown CA never connects', async () => {
    for (const variant of [flows('wrong', { ca: path.join(TLS_DIR, 'ca.crt') }), flows('s3cret', { credentials: { cadata: '' } })]) {
      capture.messages.clear();
      await deploy(server, variant);
      await new Promise((r) => setTimeout(r, 600));
      assert.ok(!capture.of('sec-status').some((m) => m.status.text === 'node-red:common.status.connected'), JSON.stringify(capture.of('sec-status')) + JSON.stringify(server.logs.slice(-5)));
    }
  });

  test('a tls-config with a certificate but no key reports it', async () => {
    await deploy(server, [tab, { id: 'tls2', type: 'tls-config', cert: path.join(TLS_DIR, 'server.crt'), key: '', ca: '' }]);
    await eventually(() => server.logs.some((l) => l.includes('No certificate/key file provided')));
  });
});

describe('tls-config with tlsConfigDisableLocalFiles', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ tlsConfigDisableLocalFiles: true });
  });
  after(async () => {
    await closePeers();
    await server.dispose();
  });

  test('refuses certificate files named in a flow and still takes pasted ones', async () => {
    await deploy(server, [tab, { id: 'tls3', type: 'tls-config', cert: '', key: '', ca: path.join(TLS_DIR, 'ca.crt') }]);
    await eventually(() => server.logs.some((l) => l.includes('Certificate files are disabled by tlsConfigDisableLocalFiles')));
    const before = server.logs.length;
    await deploy(server, [tab, { id: 'tls4', type: 'tls-config', cert: '', key: '', ca: '', credentials: { cadata: readFileSync(path.join(TLS_DIR, 'ca.crt'), 'utf8') } }]);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!server.logs.slice(before).some((l) => l.includes('tlsConfigDisableLocalFiles')), JSON.stringify(server.logs.slice(before)));
  });
});
