import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { startAddressedCluster, type ClusterInstance, type TestCluster } from '../helpers/cluster.js';
import { startHaproxy, type TestBalancer } from '../helpers/haproxy.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { killRunnels, ROOT } from '../helpers/process.js';
import { eventually, login, request } from '../helpers/server.js';

/**
 * Dashboard 2.0 (@flowfuse/node-red-dashboard, loaded from the repository's node_modules) on three
 * instances behind HAProxy, round-robin without sticky sessions, with Chromium pages: a widget
 * update reaches every page whichever instance ran the flow, a button runs its flow once, and the
 * pages of a killed instance come back with their widgets as they were.
 */

const DASHBOARD = path.join(ROOT, 'node_modules', '@flowfuse', 'node-red-dashboard');

function flows(counterUrl: string) {
  const grp = { group: 'grp', z: 'dash' };
  return [
    { id: 'dash', type: 'tab', label: 'Dashboard' },
    { id: 'base', type: 'ui-base', name: 'UI', path: '/dashboard', includeClientData: true, acceptsClientConfig: ['ui-notification', 'ui-control'], showPathInSidebar: false, navigationStyle: 'default' },
    { id: 'theme', type: 'ui-theme', name: 'Default', colors: { surface: '#ffffff', primary: '#0094CE', bgPage: '#eeeeee', groupBg: '#ffffff', groupOutline: '#cccccc' }, sizes: { pagePadding: '12px', groupGap: '12px', groupBorderRadius: '4px', widgetGap: '12px' } },
    { id: 'page', type: 'ui-page', name: 'Cluster', ui: 'base', path: '/page1', icon: 'home', layout: 'grid', theme: 'theme', order: 1, className: '', visible: 'true', disabled: 'false' },
    { id: 'grp', type: 'ui-group', name: 'Every instance', page: 'page', width: '6', height: '1', order: 1, showTitle: true, className: '', visible: 'true', disabled: 'false' },
    { id: 'shown', type: 'ui-text', ...grp, order: 1, width: 0, height: 0, name: '', label: 'Last update', format: '{{msg.payload}}', layout: 'row-spread', wires: [] },
    { id: 'press', type: 'ui-button', ...grp, order: 2, width: 0, height: 0, name: '', label: 'Press', payload: 'pressed', payloadType: 'str', topic: 'topic', topicType: 'msg',
      emulateClick: false, tooltip: '', color: '', bgcolor: '', className: '', icon: '', iconPosition: 'left', buttonColor: '', textColor: '', iconColor: '',
      enableClick: true, enablePointerdown: false, pointerdownPayload: '', pointerdownPayloadType: 'str', enablePointerup: false, pointerupPayload: '', pointerupPayloadType: 'str', wires: [['count']] },
    { id: 'count', type: 'http request', z: 'dash', method: 'POST', ret: 'txt', paytoqs: 'ignore', url: counterUrl, wires: [] },
    { id: 'show', type: 'http in', z: 'dash', url: '/show', method: 'get', wires: [['value']] },
    { id: 'value', type: 'change', z: 'dash', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'req.query.n', tot: 'msg' }], wires: [['shown', 'showed']] },
    { id: 'showed', type: 'http response', z: 'dash', wires: [] },
  ];
}

describe('cluster: Dashboard 2.0 pages behind HAProxy show what every instance did', { timeout: 600_000 }, () => {
  let pg: TestPostgres | undefined;
  let cluster: TestCluster | undefined;
  let nodes: ClusterInstance[];
  let balancer: TestBalancer;
  let browser: Browser;
  const pages: WatchedPage[] = [];
  /** Bodies the button's flow posted. */
  const presses: string[] = [];
  const counter = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      presses.push(body);
      res.end('ok');
    });
  });

  before(async () => {
    counter.listen(0, '127.0.0.1');
    await once(counter, 'listening');
    pg = await startPostgres();
    cluster = await startAddressedCluster(pg.url, 'dashboard', 3, { nodesDir: [DASHBOARD] });
    nodes = cluster.instances;
    const token = await login(nodes[0]!);
    const counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}/press`;
    const r = await request(nodes[0]!.at('flows'), { method: 'POST', token, headers: { 'Runtime-API-Version': 'v2' }, json: { flows: flows(counterUrl) } });
    assert.equal(r.status, 200, r.text);
    for (const n of nodes) await eventually(async () => (await request(n.at('show?n=ready'))).status === 200, 15_000);
    balancer = await startHaproxy(nodes.map((n) => n.url));
    // HAProxy answers 503 until its first checks found the instances up.
    await eventually(async () => (await Promise.all(Array.from({ length: 6 }, () => request(balancer.at('health'))))).every((r) => r.status === 200), 10_000);
    browser = await launchBrowser();
    for (const name of ['a', 'b', 'c']) {
      const w = await watchedPage(browser, `dashboard-${name}`);
      await w.page.goto(balancer.at('dashboard/page1'));
      await w.page.waitForSelector('text=Last update');
      pages.push(w);
    }
  });
  after(async () => {
    await browser?.close();
    await balancer?.stop();
    await cluster?.stop().catch(() => undefined);
    killRunnels();
    await pg?.dispose();
    counter.close();
  });

  /** The instance holding a page's session: socket.io session ids begin with it (base64url), and the page's websocket names its session. */
  const holderOf = (w: WatchedPage) => {
    const sid = new URL(w.sockets.at(-1)!).searchParams.get('sid')!;
    return nodes.find((n) => n.id === Buffer.from(sid.split('.')[0]!, 'base64url').toString())!;
  };

  const showing = (w: WatchedPage, value: string) => w.page.locator(`text=${value}`).count().then((n) => n > 0);

  it('a widget update from a flow on any instance reaches every page', async () => {
    for (const n of nodes) {
      assert.equal((await request(n.at(`show?n=from-${n.id}`))).status, 200);
      for (const w of pages) await eventually(() => showing(w, `from-${n.id}`), 10_000);
    }
    for (const [i, w] of pages.entries()) await w.shot(`update-${i}`);
    console.log(`pages on ${pages.map((w) => holderOf(w).id).join(', ')}`);
  });

  it('a button press runs its flow once', async () => {
    await pages[0]!.page.click('button:has-text("Press")');
    await eventually(() => presses.length > 0, 10_000);
    // A second run would come from another instance: once an update sent from each has reached every page, it would have too.
    for (const n of nodes) {
      assert.equal((await request(n.at(`show?n=after-press-${n.id}`))).status, 200);
      for (const w of pages) await eventually(() => showing(w, `after-press-${n.id}`), 10_000);
    }
    assert.deepEqual(presses, ['pressed']);
  });

  it('the pages of a killed instance keep their widgets and reconnect within 5 s of the kill', async () => {
    const victim = holderOf(pages[0]!);
    const survivor = nodes.find((n) => n !== victim)!;
    // Dashboard 2.0 keeps widget values per instance and sends them to a page that (re)connects: the
    // value is set on every instance that survives, so whichever a page reconnects to has it.
    for (const n of nodes.filter((n) => n !== victim)) assert.equal((await request(n.at('show?n=before-kill'))).status, 200);
    for (const w of pages) await eventually(() => showing(w, 'before-kill'), 10_000);
    // Each page notes (on the machine's clock, as the test) when it first shows an update sent after the kill.
    const noteFirstUpdate = `new MutationObserver(() => {
      if (window.shownAt === undefined && document.body.innerText.includes('after-kill-')) window.shownAt = Date.now();
    }).observe(document.body, { subtree: true, childList: true, characterData: true })`;
    for (const w of pages) await w.page.evaluate(noteFirstUpdate);
    const killed = Date.now();
    victim.process.child.kill('SIGKILL');
    await eventually(async () => (await Promise.all(Array.from({ length: 6 }, () => request(balancer.at('health'))))).every((r) => r.status === 200), 10_000);
    const out = Date.now();
    // Once the victim's pages hold a websocket to another instance, they still show the value.
    const onVictim = pages.filter((w) => holderOf(w) === victim);
    await eventually(() => onVictim.every((w) => holderOf(w) !== victim), 10_000, 50);
    for (const w of pages) assert.ok(await showing(w, 'before-kill'), 'the widget keeps its value');
    // Every page shows an update sent after the kill once it is connected again.
    let n = 0;
    const shownAt = await eventually(async () => {
      await request(survivor.at(`show?n=after-kill-${++n}`));
      const times = await Promise.all(pages.map((w) => w.page.evaluate(() => (globalThis as unknown as { shownAt?: number }).shownAt)));
      return times.every((t) => t !== undefined) ? (times as number[]) : undefined;
    }, 10_000, 100);
    const ms = Math.max(...shownAt!) - killed;
    const afterOut = Math.max(...shownAt!) - out;
    for (const [i, w] of pages.entries()) await w.shot(`after-kill-${i}`);
    console.log(`every page showed an update ${ms} ms after ${victim.id} was killed, ${afterOut} ms after the balancer took it out; pages on ${pages.map((w) => holderOf(w).id).join(', ')} now`);
    // HAProxy takes the dead instance out at its first refused connection and retries that connection
    // on another instance, so the pages' first retry reconnects: the issue's 5 s hold from the kill.
    assert.ok(ms < 5000, `every page showed an update ${ms} ms after the kill, ${afterOut} ms after the balancer took the instance out`);
  });
});
