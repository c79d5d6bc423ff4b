import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/server.js';
import { type Conf, flowSuite } from './flow.js';

const node = (id: string, extra: Conf = {}): Conf => ({ id, type: 'debug', z: 't1', name: id, x: 100, y: 100, wires: [], ...extra });
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('debug node', () => {
  const published: Record<string, any>[] = [];
  const statuses: { id: string; status: Record<string, unknown> }[] = [];
  const publishedBy = (id: string) => published.filter((p) => p.id === id);
  const t = flowSuite((server) => {
    server.instance.runtime.events.on('comms', (e: { topic: string; data: Record<string, unknown> }) => {
      if (e.topic === 'debug') published.push(e.data);
    });
    server.instance.runtime.events.on('node-status', (e: { id: string; status: Record<string, unknown> }) => statuses.push(e));
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'debug' },
      node('d-payload', { active: true, tosidebar: true, console: false, tostatus: false, complete: 'payload', targetType: 'msg' }),
      node('d-full', { active: true, tosidebar: true, complete: 'true', targetType: 'full' }),
      node('d-inactive', { active: false, tosidebar: true, tostatus: true, console: true, complete: 'payload' }),
      node('d-counter', { active: true, tosidebar: false, tostatus: true, complete: 'payload', statusType: 'counter', statusVal: '' }),
      node('d-auto', { active: true, tosidebar: false, tostatus: true, complete: 'payload', statusType: 'auto', statusVal: '' }),
      node('d-status', { active: true, tosidebar: false, tostatus: true, complete: 'payload', statusType: 'auto', statusVal: '' }),
      node('d-jsonata', { active: true, tosidebar: true, complete: 'payload * 2', targetType: 'jsonata' }),
      node('d-console', { active: true, tosidebar: false, console: true, complete: 'payload.deep' }),
      node('d-flood', { active: true, tosidebar: true, console: true, complete: 'payload' }),
    ];
    return flows;
  });
  const { receive } = t;

  test('sidebar output is published encoded and never written to the log', async () => {
    receive('d-payload', { _msgid: 'm1', payload: 'hi', topic: 'greeting' });
    await eventually(() => publishedBy('d-payload').length === 1);
    assert.deepEqual(plain(publishedBy('d-payload')[0]), {
      id: 'd-payload', z: 't1', path: 't1', name: 'd-payload', topic: 'greeting', property: 'payload', msg: 'hi', format: 'string[2]',
    });
    receive('d-payload', { _msgid: 'm-secret', payload: 'sidebar-only-secret' });
    await eventually(() => publishedBy('d-payload').some((p) => String(p.msg).includes('sidebar-only-secret')));
    // Node-RED's debug node logs only with "to console"; the sidebar is not the operator's log.
    assert.deepEqual(t.server.logs.filter((l) => l.includes('"debug":{') || l.includes('sidebar-only-secret') || l.includes('greeting')), []);
  });

  test('the whole message is published as an encoded object', async () => {
    receive('d-full', { _msgid: 'm2', payload: { a: 1 } });
    await eventually(() => publishedBy('d-full').length === 1);
    const entry = publishedBy('d-full')[0];
    assert.equal(entry.format, 'Object');
    assert.equal(entry.property, undefined);
    assert.deepEqual(JSON.parse(entry.msg), { _msgid: 'm2', payload: { a: 1 } });
  });

  test('a JSONata target is evaluated', async () => {
    receive('d-jsonata', { _msgid: 'm3', payload: 21 });
    await eventually(() => publishedBy('d-jsonata').length === 1);
    assert.equal(publishedBy('d-jsonata')[0].msg, '42');
    assert.equal(publishedBy('d-jsonata')[0].format, 'number');
  });

  test('status shows the value; an inactive node still shows status and logs, but publishes nothing', async () => {
    receive('d-inactive', { _msgid: 'm4', payload: 'inactive-value' });
    receive('d-status', { _msgid: 'm5', payload: 'a status text that is longer than thirty-two characters' });
    await eventually(() => statuses.some((s) => s.id === 'd-status'));
    assert.deepEqual(statuses.find((s) => s.id === 'd-status')!.status, { fill: 'grey', shape: 'dot', text: 'a status text that is longer tha...' });
    assert.deepEqual(publishedBy('d-status'), []);
    await eventually(() => statuses.some((s) => s.id === 'd-inactive'));
    assert.deepEqual(statuses.find((s) => s.id === 'd-inactive')!.status, { fill: 'grey', shape: 'dot', text: 'inactive-value' });
    await eventually(() => t.server.logs.some((l) => l.includes('inactive-value')));
    assert.deepEqual(publishedBy('d-inactive'), []);
  });

  test('statusType counter counts messages; auto status takes msg.status with its defaults and skips repeats', async () => {
    // Node-RED keeps the count a number; Runnel's node.status makes every text a string.
    const counted = () => statuses.filter((s) => s.id === 'd-counter').map((s) => String(s.status.text));
    await eventually(() => counted().length === 1);
    receive('d-counter', { _msgid: 'c1', payload: 'x' });
    await eventually(() => counted().length === 2);
    assert.deepEqual(counted(), ['0', '1']);
    const auto = () => statuses.filter((s) => s.id === 'd-auto').map((s) => s.status);
    receive('d-auto', { _msgid: 'a1', payload: 'p', status: { text: 'from msg' } });
    receive('d-auto', { _msgid: 'a2', payload: 'p', status: { text: 'from msg' } });
    receive('d-auto', { _msgid: 'a3', payload: 'same' });
    await eventually(() => auto().length === 2);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(auto(), [{ fill: 'grey', shape: 'ring', text: 'from msg' }, { fill: 'grey', shape: 'dot', text: 'same' }]);
  });

  test('console output logs the inspected value', async () => {
    receive('d-console', { _msgid: 'm6', payload: { deep: { x: 'console-value' } } });
    await eventually(() => t.server.logs.some((l) => l.includes("x: 'console-value'")));
    assert.deepEqual(publishedBy('d-console'), []);
  });

  test('a flood reaches the sidebar at most 100 messages a second, ending on its newest message; the console gets all', async () => {
    const sent = 2000;
    for (let i = 0; i < sent; i++) receive('d-flood', { _msgid: `f${i}`, payload: `flood-${i}` });
    // The newest message, held back when the window filled, goes when the window closes.
    await eventually(() => publishedBy('d-flood').at(-1)?.msg === `flood-${sent - 1}`, 30_000);
    const shown = publishedBy('d-flood').map((p) => Number(String(p.msg).slice('flood-'.length)));
    assert.ok(shown.length < sent, `${shown.length} of ${sent} sent to the sidebar`);
    assert.deepEqual(shown.slice(0, 100), Array.from({ length: 100 }, (_, i) => i), 'a burst of 100 passes whole');
    assert.deepEqual(shown, [...shown].sort((a, b) => a - b), 'in order');
    const consoleLines = () => t.server.logs.filter((l) => /"msg":"flood-\d+"/.test(l) && !l.includes('"debug":{'));
    await eventually(() => consoleLines().length === sent, 30_000);
  });
});
