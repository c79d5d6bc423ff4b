import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server.js';
import { deploy, type Conf } from '../helpers/deploy.js';
import { flowSuite } from './flow.js';

/**
 * GET /<path> → (capture `seen-<path>`) and a delay of `seconds` → http response on tab `tab`;
 * with `via`, the route sends to that node instead of its own delay.
 */
function route(tab: string, path: string, seconds: number, via?: string): Conf[] {
  const delay = `wait-${path}`;
  const nodes: Conf[] = [
    { id: `in-${path}`, type: 'http in', z: tab, url: `/${path}`, method: 'get', x: 1, y: 1, wires: [[via ?? delay, `seen-${path}`]] },
    { id: `seen-${path}`, type: 'test-capture', z: tab, name: `seen-${path}`, x: 1, y: 1, wires: [] },
    { id: `out-${path}`, type: 'http response', z: tab, x: 1, y: 1, wires: [] },
  ];
  if (!via) nodes.push({ id: delay, type: 'delay', z: tab, pauseType: 'delay', timeout: String(seconds), timeoutUnits: 'seconds', x: 1, y: 1, wires: [[`out-${path}`]] });
  return nodes;
}

/** The same configuration with one node's name changed: a `nodes` deploy replaces just that node. */
const renamed = (flows: Conf[], id: string, name: string) => flows.map((n) => (n.id === id ? { ...n, name } : n));

describe('http in under a redeploy', () => {
  const flows: Conf[] = [
    { id: 't1', type: 'tab' },
    { id: 't2', type: 'tab' },
    ...route('t1', 'slow', 5),
    ...route('t1', 'linked', 5, 'to-t2'),
    { id: 'to-t2', type: 'link out', z: 't1', links: ['from-t1'], x: 1, y: 1, wires: [] },
    { id: 'from-t1', type: 'link in', z: 't2', x: 1, y: 1, wires: [['wait-t2']] },
    { id: 'wait-t2', type: 'delay', z: 't2', pauseType: 'delay', timeout: '5', timeoutUnits: 'seconds', x: 1, y: 1, wires: [['out-linked']] },
    ...route('t2', 'steady', 2),
    { id: 'elsewhere', type: 'function', z: 't2', func: 'return msg;', x: 1, y: 1, wires: [] },
  ];
  const t = flowSuite(() => flows);

  /** Starts a request and waits until its message is inside the flow; `answer` settles with its response. */
  async function inFlight(path: string) {
    const before = t.capture.of(`seen-${path}`).length;
    const answer = request(t.server.at(path));
    await t.capture.waitFor(`seen-${path}`, before + 1, 15_000);
    return { answer };
  }

  function assertRestarted(answered: { status: number; body: any; headers: Headers }) {
    assert.equal(answered.status, 503);
    assert.equal(answered.body.code, 'flow_restarted');
    assert.equal(answered.headers.get('retry-after'), '1');
  }

  test('nodes deploy replacing a node after the route: the request inside it gets 503 flow_restarted, not a hang', async () => {
    const { answer } = await inFlight('slow');
    await deploy(t.server, renamed(flows, 'wait-slow', 'replaced'), { type: 'nodes' });
    assertRestarted(await answer);
  });

  test('the replaced node reached over a link: 503 too', async () => {
    const { answer } = await inFlight('linked');
    await deploy(t.server, renamed(flows, 'wait-t2', 'replaced'), { type: 'nodes' });
    assertRestarted(await answer);
  });

  test('a deploy replacing nodes no request passes through leaves the open ones to finish', async () => {
    const { answer } = await inFlight('steady');
    await deploy(t.server, renamed(flows, 'elsewhere', 'replaced'), { type: 'nodes' });
    const answered = await answer;
    assert.equal(answered.status, 200);
  });

  test('full deploy: the route itself restarts, its open request gets 503 flow_restarted', async () => {
    const { answer } = await inFlight('slow');
    await deploy(t.server, flows, { type: 'full' });
    assertRestarted(await answer);
  });
});
