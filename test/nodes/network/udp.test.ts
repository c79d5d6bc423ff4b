import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { startServer, request, login, adminAuth, eventually, type TestServer } from '../../helpers/server.js';
import { installCapture, type Capture } from '../../helpers/capture.js';
import { deployListening } from './listening.js';
import { node, receiver } from '../flow.js';
import { deploy } from '../../helpers/deploy.js';

const tab = { id: 't1', type: 'tab', label: 'udp' };
const cap = (id: string) => node(id, 'test-capture');


async function sendDatagram(text: string, port: number, host = '127.0.0.1', type: 'udp4' | 'udp6' = 'udp4'): Promise<void> {
  const s = dgram.createSocket(type);
  await new Promise<void>((resolve, reject) => s.send(text, port, host, (err) => (err ? reject(err) : resolve())));
  s.close();
}

/** A listening socket on 127.0.0.1 (or ::1) that collects datagrams as text. */
async function listener(type: 'udp4' | 'udp6' = 'udp4', port = 0, address = type === 'udp4' ? '127.0.0.1' : '::1') {
  const s = dgram.createSocket({ type, reuseAddr: true });
  const got: string[] = [];
  s.on('message', (m) => got.push(m.toString()));
  s.bind(port, address);
  await once(s, 'listening');
  return { socket: s, port: s.address().port, got };
}

describe('udp nodes', () => {
  let server: TestServer;
  let capture: Capture;
  let token: string;
  const receive = receiver(() => server);
  before(async () => {
    server = await startServer({ adminAuth: adminAuth() });
    capture = installCapture(server);
    token = await login(server);
  });
  after(() => server.dispose());

  test('udp in receives unicast over IPv4 and IPv6 in each data type; GET /udp-ports/:id lists the ports', async () => {
    const [p4, p6, pb] = await deployListening(server, 3, ([p4, p6, pb]) => [
      tab,
      node('in4', 'udp in', { iface: '', port: String(p4), ipv: 'udp4', multicast: 'false', group: '', datatype: 'utf8' }, [['in4-got']]), cap('in4-got'),
      node('in6', 'udp in', { iface: '', port: String(p6), ipv: 'udp6', multicast: 'false', group: '', datatype: 'buffer' }, [['in6-got']]), cap('in6-got'),
      node('inb', 'udp in', { iface: '', port: String(pb), ipv: 'udp4', multicast: 'false', group: '', datatype: 'base64' }, [['inb-got']]), cap('inb-got'),
    ], { token }, 'udp4') as [number, number, number];
    await eventually(async () => {
      await sendDatagram('four', p4);
      return capture.of('in4-got').length > 0;
    });
    const [m] = capture.of('in4-got');
    assert.equal(m.payload, 'four');
    assert.equal(m.ip, '127.0.0.1');
    assert.equal(m.fromip, `127.0.0.1:${m.port}`);
    await sendDatagram('six', p6, '::1', 'udp6');
    const [m6] = await capture.waitFor('in6-got');
    assert.deepEqual(m6.payload, Buffer.from('six'));
    assert.equal(m6.ip, '::1');
    await sendDatagram('b64', pb);
    assert.equal((await capture.waitFor('inb-got'))[0].payload, Buffer.from('b64').toString('base64'));

    const r = await request(server.at(`udp-ports/in4`), { token });
    assert.equal(r.status, 200);
    assert.deepEqual([...r.body].sort(), [String(p4), String(p6), String(pb)].sort());
    assert.equal((await request(server.at('udp-ports/in4'))).status, 401, 'the route needs udp-ports.read');
  });

  test('udp out sends unicast to its address or msg.ip/msg.port, IPv4 and IPv6, text, buffers and base64', async () => {
    const peer4 = await listener('udp4');
    const peer6 = await listener('udp6');
    await deploy(server, [
      tab,
      node('to4', 'udp out', { addr: '127.0.0.1', iface: '', port: String(peer4.port), ipv: 'udp4', outport: '', base64: false, multicast: 'false' }, []),
      node('to6', 'udp out', { addr: '::1', iface: '', port: String(peer6.port), ipv: 'udp6', outport: '', base64: true, multicast: 'false' }, []),
      node('toany', 'udp out', { addr: '', iface: '', port: '', ipv: 'udp4', outport: '', base64: false, multicast: 'false' }, []),
      node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]), cap('errors'),
    ], { token });
    receive('to4', { payload: 'hello' });
    receive('to4', { payload: Buffer.from('bytes') });
    receive('to4', { payload: { a: 1 } });
    receive('to6', { payload: Buffer.from('over six').toString('base64') });
    receive('toany', { payload: 'routed', ip: '127.0.0.1', port: peer4.port });
    receive('toany', { payload: 'nowhere' });
    await eventually(() => peer4.got.length === 4 && peer6.got.length === 1);
    assert.deepEqual(peer4.got.sort(), ['[object Object]', 'bytes', 'hello', 'routed'].sort());
    assert.deepEqual(peer6.got, ['over six']);
    await eventually(() => server.logs.some((l) => l.includes('udp: ip address not set')));
    peer4.socket.close();
    peer6.socket.close();
  });

  test('broadcast and multicast between udp out and udp in on the loopback interface', async () => {
    await deployListening(server, 2, ([bport, mport]) => [
      tab,
      node('bin', 'udp in', { iface: '', port: String(bport), ipv: 'udp4', multicast: 'false', group: '', datatype: 'utf8' }, [['bin-got']]), cap('bin-got'),
      node('bout', 'udp out', { addr: '127.255.255.255', iface: '', port: String(bport), ipv: 'udp4', outport: '', base64: false, multicast: 'board' }, []),
      node('min', 'udp in', { iface: '127.0.0.1', port: String(mport), ipv: 'udp4', multicast: 'true', group: '239.7.7.7', datatype: 'utf8' }, [['min-got']]), cap('min-got'),
      node('mout', 'udp out', { addr: '239.7.7.7', iface: '127.0.0.1', port: String(mport), ipv: 'udp4', outport: '', base64: false, multicast: 'multi' }, []),
    ], { token }, 'udp4');
    await eventually(async () => {
      receive('bout', { payload: 'to all' });
      receive('mout', { payload: 'to group' });
      await new Promise((r) => setTimeout(r, 50));
      return capture.of('bin-got').length > 0 && capture.of('min-got').length > 0;
    });
    assert.equal(capture.of('bin-got')[0].payload, 'to all');
    assert.equal(capture.of('min-got')[0].payload, 'to group');
    await deploy(server, [tab], { token });
    const r = await request(server.at('udp-ports/x'), { token });
    assert.deepEqual(r.body, [], 'ports are released when the nodes stop');
  });
});
