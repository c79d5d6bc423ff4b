import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, eventually, type TestServer } from '../../helpers/server.js';
import { installCapture, type Capture } from '../../helpers/capture.js';
import { hasMosquitto, startMosquitto, closePeers, peer, collect, type Mosquitto } from '../../helpers/mqtt.js';
import { node, receiver, type Conf } from '../flow.js';
import { deploy } from '../../helpers/deploy.js';

const tab = { id: 't1', type: 'tab', label: 'mqtt5' };
const cap = (id: string) => node(id, 'test-capture');


// CI installs mosquitto (.ci/run); a developer machine without it skips rather than fails.
describe('mqtt nodes with MQTT 5 against mosquitto', { skip: !hasMosquitto && !process.env.CI && 'mosquitto is not installed' }, () => {
  let broker: Mosquitto;
  let server: TestServer;
  let capture: Capture;
  const receive = receiver(() => server);
  const v5broker = (extra: Conf = {}) => ({ id: 'b5', type: 'mqtt-broker', broker: '127.0.0.1', port: String(broker.port), protocolVersion: '5', keepalive: 60, cleansession: true, autoConnect: true, ...extra });
  const connected = (id: string) => eventually(() => capture.of(`${id}-status`).some((m) => m.status.text === 'node-red:common.status.connected'));
  const watch = (id: string) => [node(`${id}-st`, 'status', { scope: [id] }, [[`${id}-status`]]), cap(`${id}-status`)];

  before(async () => {
    broker = await startMosquitto();
    server = await startServer({ mqttReconnectTime: 200 });
    capture = installCapture(server);
  });
  after(async () => {
    await closePeers();
    await server?.dispose();
    await broker?.close();
  });

  test('v5 properties travel out and in: userProperties, contentType, responseTopic, correlationData, expiry', async () => {
    await deploy(server, [
      tab, v5broker(),
      node('in', 'mqtt in', { topic: 'v5/#', qos: '1', datatype: 'auto-detect', broker: 'b5', nl: false, rap: true, rh: 0 }, [['in-got']]), cap('in-got'),
      node('out', 'mqtt out', { topic: '', qos: '1', broker: 'b5' }, []),
      node('out-cfg', 'mqtt out', { topic: 'v5/cfg', qos: '1', broker: 'b5', userProps: '{"from":"config"}', contentType: 'text/plain', respTopic: 'v5/reply', correl: 'abc', expiry: '60' }, []),
      ...watch('in'),
    ]);
    await connected('in');
    const outside = await peer(broker.port, { protocolVersion: 5 });
    const seen = collect(outside);
    await outside.subscribeAsync('v5/#', { qos: 1 });
    receive('out', { topic: 'v5/msg', payload: { a: 1 }, userProperties: { k: 'v', n: 2 }, contentType: 'application/json', responseTopic: 'v5/resp', correlationData: Buffer.from('cid'), messageExpiryInterval: 30 });
    receive('out-cfg', { payload: 'hi' });
    await eventually(() => seen.all.length === 2);
    const p = seen.all.find((m) => m.topic === 'v5/msg')!.packet.properties;
    assert.deepEqual({ ...p.userProperties }, { k: 'v', n: '2' });
    assert.equal(p.contentType, 'application/json');
    assert.equal(p.responseTopic, 'v5/resp');
    assert.equal(Buffer.from(p.correlationData).toString(), 'cid');
    assert.ok(p.messageExpiryInterval <= 30 && p.messageExpiryInterval > 0);
    const c = seen.all.find((m) => m.topic === 'v5/cfg')!.packet.properties;
    assert.deepEqual({ ...c.userProperties }, { from: 'config' });
    assert.equal(c.contentType, 'text/plain');
    assert.equal(c.responseTopic, 'v5/reply');

    const got = await capture.waitFor('in-got', 2);
    const m = got.find((x) => x.topic === 'v5/msg')!;
    assert.deepEqual(m.payload, { a: 1 }, 'application/json content is parsed');
    assert.deepEqual({ ...m.userProperties }, { k: 'v', n: '2' });
    assert.equal(m.contentType, 'application/json');
    assert.equal(m.responseTopic, 'v5/resp');
    assert.equal(Buffer.from(m.correlationData).toString(), 'cid');
    assert.equal(got.find((x) => x.topic === 'v5/cfg')!.payload, 'hi');

    await outside.publishAsync('v5/bytes', '{"x":1}', { qos: 1, properties: { contentType: 'application/octet-stream' } });
    const bytes = (await capture.waitFor('in-got', 3))[2];
    assert.ok(Buffer.isBuffer(bytes.payload), 'a binary content type keeps the buffer');
    await outside.endAsync();
  });

  test('a shared subscription splits messages between two mqtt in nodes without duplicates', async () => {
    await deploy(server, [
      tab, v5broker(),
      node('s1', 'mqtt in', { topic: '$share/grp/work/+', qos: '1', datatype: 'utf8', broker: 'b5' }, [['shared']]),
      { id: 'b5b', type: 'mqtt-broker', broker: '127.0.0.1', port: String(broker.port), protocolVersion: '5', autoConnect: true },
      node('s2', 'mqtt in', { topic: '$share/grp/work/+', qos: '1', datatype: 'utf8', broker: 'b5b' }, [['shared']]),
      node('shared', 'test-capture', { name: 'shared' }), ...watch('s1'), ...watch('s2'),
    ]);
    await connected('s1');
    await connected('s2');
    const outside = await peer(broker.port, { protocolVersion: 5 });
    for (let i = 0; i < 20; i++) await outside.publishAsync(`work/${i}`, String(i), { qos: 1 });
    const got = await capture.waitFor('shared', 20);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(capture.of('shared').map((m) => Number(m.payload)).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i));
    assert.equal(got.length, 20);
    await outside.endAsync();
  });

  test('MQTT 3.1 (compatibility mode) still connects', async () => {
    await deploy(server, [tab, v5broker({ protocolVersion: '3', compatmode: true }), node('old', 'mqtt in', { topic: 'old/#', qos: '0', datatype: 'utf8', broker: 'b5' }, [['old-got']]), cap('old-got'), ...watch('old')]);
    await connected('old');
    const outside = await peer(broker.port);
    await outside.publishAsync('old/x', 'v3', { qos: 0 });
    assert.equal((await capture.waitFor('old-got'))[0].payload, 'v3');
    await outside.endAsync();
  });
});
