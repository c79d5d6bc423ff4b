import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { startHaproxy, type TestBalancer } from '../helpers/haproxy.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';

/**
 * Three instances behind HAProxy, round-robin without sticky sessions, with Chromium pages on
 * different instances: the editor, http-in routes and websocket pages work through the balancer,
 * and every page shows what flows on other instances did.
 */

const LIVE_PAGE = `<!doctype html><html><body><h1>Live</h1><ul id="log"></ul><script>
  const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/ws/live');
  ws.onopen = () => document.body.dataset.open = 'yes';
  ws.onmessage = (e) => { const li = document.createElement('li'); li.textContent = e.data; document.getElementById('log').appendChild(li); };
</script></body></html>`;

const flows = [
  { id: 'web', type: 'tab', label: 'Web' },
  { id: 'in', type: 'http in', z: 'web', url: '/emit', method: 'get', x: 100, y: 60, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 'web', name: 'emit', outputs: 1, x: 300, y: 60, wires: [['dbg', 'out']], func: 'msg.payload = msg.req.query.n; return msg;' },
  { id: 'dbg', type: 'debug', z: 'web', name: 'seen', active: true, tosidebar: true, complete: 'payload', targetType: 'msg', x: 500, y: 60, wires: [] },
  { id: 'out', type: 'http response', z: 'web', x: 500, y: 120, wires: [] },
  { id: 'page', type: 'http in', z: 'web', url: '/live', method: 'get', x: 100, y: 200, wires: [['tpl']] },
  { id: 'tpl', type: 'template', z: 'web', field: 'payload', fieldType: 'msg', format: 'html', syntax: 'plain', template: LIVE_PAGE, output: 'str', x: 300, y: 200, wires: [['pageout']] },
  { id: 'pageout', type: 'http response', z: 'web', x: 500, y: 200, wires: [] },
  { id: 'live', type: 'websocket-listener', path: '/ws/live', wholemsg: 'false' },
  { id: 'tell', type: 'http in', z: 'web', url: '/tell', method: 'get', x: 100, y: 300, wires: [['told', 'tellout']] },
  { id: 'told', type: 'websocket out', z: 'web', server: 'live', client: '', x: 300, y: 300, wires: [] },
  { id: 'tellout', type: 'http response', z: 'web', x: 300, y: 360, wires: [] },
];

describe('cluster: three instances behind HAProxy, watched from Chromium', { timeout: 600_000 }, () => {
  let nodes: ClusterInstance[];
  let balancer: TestBalancer;
  let browser: Browser;

  const suite = clusterSuite('balancer', 3, { editorTheme: { palette: { catalogues: [] }, tours: false } });
  before(async () => {
    ({ nodes } = suite);
    balancer = await startHaproxy(nodes.map((n) => n.url));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await balancer?.stop();
  });

  async function openEditor(url: string, name: string): Promise<WatchedPage> {
    const w = await watchedPage(browser, `balancer-${name}`);
    // The editor sends its subscriptions once its token is accepted, which may finish after the
    // workspace shows. `notification/runtime-state` is retained and comes with `notification/#`,
    // which the editor subscribes to after `debug`; /comms handles a client's messages in order.
    const debugSubscribed = new Promise<void>((resolve) => w.page.on('websocket', (ws) => {
      let asked = false;
      ws.on('framesent', (f) => void (asked ||= String(f.payload).includes('"subscribe":"debug"')));
      ws.on('framereceived', (f) => {
        if (asked && String(f.payload).includes('"topic":"notification/runtime-state"')) resolve();
      });
    }));
    await w.page.goto(url);
    await w.page.waitForSelector('#node-dialog-login-username', { state: 'visible' });
    await w.page.fill('#node-dialog-login-username', 'admin');
    await w.page.fill('#node-dialog-login-password', ADMIN_PASSWORD);
    await w.page.click('#node-dialog-login-submit');
    await w.page.waitForSelector('#red-ui-workspace-chart', { state: 'visible' });
    await w.page.evaluate(() => (globalThis as any).RED.sidebar.show('debug'));
    await debugSubscribed;
    return w;
  }

  async function openLive(url: string, name: string): Promise<WatchedPage> {
    const w = await watchedPage(browser, `balancer-${name}`);
    await w.page.goto(url);
    await w.page.waitForSelector('body[data-open="yes"]');
    return w;
  }

  it('deploys through the balancer and answers every http-in request on every instance', async () => {
    const login = await request(balancer.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
    });
    assert.equal(login.status, 200, login.text);
    const token = login.body.access_token as string;
    const r = await request(balancer.at('flows'), { method: 'POST', token, headers: { 'Runtime-API-Version': 'v2' }, json: { flows } });
    assert.equal(r.status, 200, r.text);
    for (const n of nodes) await eventually(async () => (await request(n.at('emit?n=ready'))).status === 200, 15_000);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => request(balancer.at(`emit?n=r${i}`))));
    assert.deepEqual(answers.map((a) => a.status), Array(30).fill(200));
    assert.deepEqual(answers.map((a) => a.text), Array.from({ length: 30 }, (_, i) => `r${i}`));
  });

  /** The node label of the one debug message whose payload is `from-node<i>`, for each instance i. */
  async function debugNames(w: WatchedPage): Promise<string[]> {
    const shown = await w.page.$$eval('.red-ui-debug-msg', (els) => els.map((e) => ({ name: e.querySelector('.red-ui-debug-msg-name')?.textContent ?? '', text: e.textContent ?? '' })));
    return nodes.map((_, i) => {
      const of = shown.filter((m) => m.text.includes(`"from-node${i}"`));
      assert.equal(of.length, 1, `from-node${i} shown ${of.length} times`);
      return of[0]!.name;
    });
  }

  // A round-robin balancer puts the editor's /comms on any instance, and the sidebar tags only
  // other instances' messages: which one comes untagged through the balancer is not known beforehand.
  it('shows in editors through the balancer and on node2 the debug output of every instance, each once, tagged where another instance ran it', async (t) => {
    const viaBalancer = await openEditor(balancer.url, 'editor-balancer');
    const onNode2 = await openEditor(nodes[2]!.url, 'editor-node2');
    for (const [i, n] of nodes.entries()) assert.equal((await request(n.at(`emit?n=from-node${i}`))).text, `from-node${i}`);
    for (const w of [viaBalancer, onNode2]) {
      for (const i of nodes.keys()) await w.page.waitForSelector(`.red-ui-debug-msg:has-text("from-node${i}")`);
    }
    await viaBalancer.shot('debug');
    await onNode2.shot('debug');
    const tagged = (local: number) => nodes.map((n, i) => (i === local ? 'node: seen' : `node: [${n.id}] seen`));
    assert.deepEqual(await debugNames(onNode2), tagged(2));
    const throughBalancer = await debugNames(viaBalancer);
    const local = throughBalancer.indexOf('node: seen');
    t.diagnostic(`the editor through the balancer has its /comms on node${local}`);
    assert.ok(local >= 0, `one message untagged, from the instance holding /comms: ${throughBalancer.join(', ')}`);
    assert.deepEqual(throughBalancer, tagged(local));
    for (const w of [viaBalancer, onNode2]) assert.deepEqual(w.errors.filter((e) => !e.includes('status of 401')), []);
  });

  it('shows on live pages through the balancer and on node0 a websocket broadcast sent from node1', async () => {
    const live = [await openLive(balancer.at('live'), 'live-a'), await openLive(balancer.at('live'), 'live-b'), await openLive(nodes[0]!.at('live'), 'live-node0')];
    assert.equal((await request(nodes[1]!.at('tell?n=broadcast-from-node1'))).status, 200);
    for (const w of live) {
      await w.page.waitForSelector('#log li:has-text("broadcast-from-node1")');
      await w.shot('broadcast');
      assert.equal(await w.page.locator('#log li').count(), 1);
    }
  });
});
