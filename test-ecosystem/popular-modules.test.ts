/**
 * The most used Node-RED modules, installed from the npm registry at pinned
 * versions through POST /nodes into one Runnel, each checked by its own observable behaviour — no
 * outside server: what needs one is a broker this test starts, a file, a route, or the module's
 * own status. The outcome table is printed at the end (the README's table of popular modules).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import mqtt from 'mqtt';
import type { Page } from 'playwright-core';
import { request, startServer, tempDir, type TestServer } from '../test/helpers/server.js';
import { installCapture, type Capture } from '../test/helpers/capture.js';
import { removeDir } from '../test/helpers/dirs.js';
import { deploy } from '../test/helpers/deploy.js';
import { launchBrowser, watchedPage } from '../test/helpers/browser.js';
import { captureNode, flowNode, inject, table, TAB, type ModuleResult } from './support.js';

const INSTALL_TIMEOUT = 300_000;

/** A free loopback port, for a broker a module starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('popular modules from the npm registry', { timeout: 40 * 60_000 }, () => {
  let server: TestServer;
  let capture: Capture;
  let work: string;
  const results: ModuleResult[] = [];
  const api = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);
  const onTab = (nodes: Record<string, unknown>[]) => deploy(server, nodes, { tab: TAB });
  /**
   * Opens a dashboard page in Chromium and waits until `rendered` sees the widgets: the page works
   * (its scripts, styles and live connection to the server), not just its HTML. Console errors are
   * the dashboards' own client code meeting these minimal widget settings, so only failed requests
   * count against the server.
   */
  const inBrowser = async (url: string, name: string, rendered: (page: Page) => Promise<unknown>) => {
    const browser = await launchBrowser();
    try {
      const w = await watchedPage(browser, name);
      await w.page.goto(server.at(url));
      await rendered(w.page);
      await w.shot('rendered');
      // node-red-dashboard asks for an optional loading.html that users may add; Node-RED answers 404 too.
      const failed = w.requests.filter((r) => /\s[45]\d\d$/.test(r) && !r.endsWith('/loading.html 404'));
      assert.deepEqual(failed, [], `every request of ${url} was answered`);
    } finally {
      await browser.close();
    }
  };

  before(async () => {
    work = await tempDir('runnel-popular-');
    // uibuilder reports telemetry to its author's server unless told not to; nothing leaves this machine.
    server = await startServer({ uibuilder: { telemetryEnabled: false } });
    capture = installCapture(server);
  });
  after(async () => {
    console.log(`\n${table(results)}\n`);
    await server.dispose();
    await removeDir(work);
    // Some modules start timers at load that nothing stops (home-assistant's six-hourly issue check,
    // uibuilder's): in Node-RED they live as long as the process too. Once the results are out, this
    // test process ends even if they would keep it alive; an unref'd timer never holds it up.
    setTimeout(() => process.exit(), 3000).unref();
  });

  /** Installs `module@version`, runs `check`, and records the outcome either way. */
  const moduleTest = (module: string, version: string, result: string, check: () => Promise<void>): void => {
    it(`${module}@${version}`, { timeout: INSTALL_TIMEOUT }, async () => {
      const res = await api('nodes', { method: 'POST', json: { module, version }, signal: AbortSignal.timeout(240_000) });
      try {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.version, version);
        for (const set of res.body.nodes) assert.equal(set.loaded, true, `${set.id}: ${set.err}`);
        capture.messages.clear();
        await check();
        results.push({ module, version, result: result.startsWith('loads') ? result : `works: ${result}` });
      } catch (err) {
        results.push({ module, version, result: `FAILS: ${String((err as Error).message).split('\n')[0]}` });
        throw err;
      }
    });
  };

  /**
   * Modules whose nodes need a server or device this machine does not have: installed, every set
   * loaded, nothing deployed (the README says "loads, not exercised").
   */
  const loads: [string, string][] = [
    ['node-red-node-email', '5.2.5'], ['node-red-node-twitter', '1.2.0'], ['node-red-node-openweathermap', '1.0.1'],
    ['node-red-node-ping', '0.3.3'], ['node-red-node-feedparser', '0.3.0'], ['node-red-node-mysql', '3.0.4'],
    ['node-red-node-snmp', '0.0.24'], ['node-red-node-serialport', '2.0.3'], ['node-red-node-ui-list', '0.3.6'],
    ['node-red-contrib-ui-led', '0.4.11'], ['node-red-contrib-telegrambot', '17.0.6'], ['node-red-contrib-redis', '1.3.9'],
    ['node-red-contrib-opcua', '0.2.354'], ['node-red-contrib-s7', '3.1.3'], ['node-red-contrib-mssql-plus', '0.13.1'],
    ['node-red-contrib-image-output', '0.6.4'], ['node-red-contrib-zigbee2mqtt', '0.6.13'], ['node-red-contrib-bigtimer', '2.8.6'],
    ['node-red-contrib-oauth2', '6.2.1'], ['node-red-contrib-mongodb4', '3.4.0'], ['node-red-contrib-re-postgres', '0.1.10'],
    ['node-red-contrib-stackhero-mysql', '1.0.6'], ['node-red-contrib-google-sheets', '1.1.2'], ['node-red-contrib-actionflows', '2.1.2'],
  ];
  for (const [module, version] of loads) moduleTest(module, version, 'loads, not exercised', async () => {});

  moduleTest('node-red-node-tail', '0.4.0', 'a line appended to the watched file is sent', async () => {
    const file = path.join(work, 'tailed.log');
    await writeFile(file, 'old line\n');
    await onTab([flowNode('tail', 'tail', [['cap']], { filetype: 'text', split: '[\\r]{0,1}\\n', filename: file }), captureNode('cap', 'tail')]);
    await new Promise((r) => setTimeout(r, 500));
    await appendFile(file, 'new line\n');
    const [msg] = await capture.waitFor('tail', 1, 10_000);
    assert.equal(msg.payload, 'new line');
    assert.equal(msg.topic, file);
  });

  moduleTest('node-red-node-suncalc', '1.2.0', 'sends the sun state and sun/moon positions at start-up', async () => {
    await onTab([
      flowNode('sun', 'sunrise', [['cap'], []], { lat: '51.5', lon: '-0.1', start: 'sunrise', end: 'sunset', soff: 0, eoff: 0, sendAtStartup: true }),
      captureNode('cap', 'sun'),
    ]);
    const [msg] = await capture.waitFor('sun', 1, 5000);
    assert.equal(msg.topic, 'sun');
    assert.ok(msg.payload === 0 || msg.payload === 1);
    assert.equal(typeof msg.sun.altitude, 'number');
    assert.match(msg.moon.icon, /^wi-moon-/);
  });

  moduleTest('node-red-node-ui-table', '0.4.5', 'its dependency node-red-dashboard is loaded with it; /ui answers; a ui_switch passes messages through (_wireCount)', async () => {
    const dashboard = await api('nodes/node-red-dashboard');
    assert.equal(dashboard.status, 200, 'node-red-dashboard, an npm dependency, is loaded');
    assert.ok(dashboard.body.nodes.every((s: { loaded: boolean }) => s.loaded));
    const page = await fetch(server.at('ui/'));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<!DOCTYPE html>/i);
    await onTab([
      { id: 'dash-tab', type: 'ui_tab', name: 'Home', icon: 'dashboard', order: 1, disabled: false, hidden: false },
      { id: 'dash-grp', type: 'ui_group', name: 'G', tab: 'dash-tab', order: 1, disp: true, width: '6', collapse: false },
      flowNode('sw', 'ui_switch', [['cap']], {
        group: 'dash-grp', order: 0, width: 0, height: 0, passthru: true, decouple: 'false', topic: 'topic', topicType: 'msg', style: '', label: 'sw',
        onvalue: 'true', onvalueType: 'bool', onicon: '', oncolor: '', offvalue: 'false', offvalueType: 'bool', officon: '', offcolor: '', animate: false, tooltip: '', className: '',
      }),
      flowNode('table', 'ui_table', [], { group: 'dash-grp', order: 1, width: 6, height: 4, columns: [], outputs: 0, cts: false }),
      captureNode('cap', 'switch'),
    ]);
    inject(server, 'sw', { payload: true });
    const [msg] = await capture.waitFor('switch', 1, 5000);
    assert.equal(msg.payload, true);
    assert.equal((await api('flows/state')).body.errors, undefined);
    await inBrowser('ui/', 'dashboard-ui', (page) => page.waitForSelector('text=Home', { timeout: 30_000 }));
  });

  moduleTest('node-red-contrib-os', '0.2.1', 'OS and Memory report this machine', async () => {
    await onTab([flowNode('os', 'OS', [['cap']]), flowNode('mem', 'Memory', [['cap']], { scale: 'Byte' }), captureNode('cap', 'os')]);
    inject(server, 'os', { payload: '' });
    inject(server, 'mem', { payload: '' });
    const [first, second] = await capture.waitFor('os', 2, 5000);
    const [info, mem] = first.payload.hostname ? [first, second] : [second, first];
    assert.equal(info.payload.platform, process.platform);
    assert.equal(typeof mem.payload.totalmem, 'number');
  });

  moduleTest('node-red-contrib-device-stats', '1.1.2', 'collects device figures (uptime, timestamp) on input', async () => {
    await onTab([flowNode('stats', 'DeviceStats', [['cap']], { mem: true, nw: false, load: true, hostname: true, useString: false }), captureNode('cap', 'stats')]);
    inject(server, 'stats', { payload: {} });
    const [msg] = await capture.waitFor('stats', 1, 5000);
    assert.equal(typeof msg.payload, 'object');
    assert.ok(Object.keys(msg.payload).length > 0, JSON.stringify(msg.payload));
  });

  moduleTest('node-red-contrib-fs-ops', '1.6.0', 'fs-ops-dir lists a directory with a filter', async () => {
    const dir = path.join(work, 'listing');
    await mkdir(dir);
    await writeFile(path.join(dir, 'a.txt'), 'a');
    await writeFile(path.join(dir, 'b.log'), 'b');
    await onTab([flowNode('dir', 'fs-ops-dir', [['cap']], { path: dir, pathType: 'str', filter: '*.txt', filterType: 'str', dir: 'files', dirType: 'msg' }), captureNode('cap', 'dir')]);
    inject(server, 'dir', { payload: '' });
    const [msg] = await capture.waitFor('dir', 1, 5000);
    assert.deepEqual(msg.files, ['a.txt']);
  });

  moduleTest('node-red-contrib-schedex', '1.10.7', 'builds its on/off events from its config (lodash pickBy) and answers "info"', async () => {
    const days = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, true]));
    await onTab([
      flowNode('sx', 'schedex', [['cap']], {
        name: 'lights', suspended: false, lat: '51.5', lon: '-0.1', ontime: '23:58', ontopic: 'on', onpayload: 'ON', onoffset: 0, onrandomoffset: 0,
        offtime: '23:59', offtopic: 'off', offpayload: 'OFF', offoffset: 0, offrandomoffset: 0, passthroughunhandled: false, ...days,
      }),
      captureNode('cap', 'schedex'),
    ]);
    assert.equal((await api('flows/state')).body.errors, undefined);
    inject(server, 'sx', { payload: 'info' });
    const [msg] = await capture.waitFor('schedex', 1, 5000);
    assert.equal(msg.topic, 'info');
    assert.equal(msg.payload.name, 'lights');
    assert.equal(msg.payload.ontime, '23:58');
    assert.ok(['on', 'off'].includes(msg.payload.state));
  });

  moduleTest('node-red-contrib-sun-position', '3.0.0-alpha2', 'its editor asset route answers through res.sendFile', async () => {
    const asset = await fetch(server.at('sun-position/js/htmlglobal.js'));
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type') ?? '', /javascript/);
    assert.ok((await asset.text()).length > 1000);
    assert.equal((await fetch(server.at('sun-position/js/.hidden'))).status, 403, 'dotfiles: deny');
  });

  moduleTest('node-red-contrib-aedes', '0.6.0', 'an MQTT broker on a free loopback port: a client connects, publishes and receives', async () => {
    const port = await freePort();
    await onTab([
      flowNode('broker', 'aedes broker', [['cap'], []], { mqtt_port: port, mqtt_ws_bind: 'port', mqtt_ws_port: '', mqtt_ws_path: '', cert: '', key: '', certname: '', keyname: '', dburl: '', usetls: false }),
      captureNode('cap', 'broker'),
    ]);
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { clientId: 'popular-test', reconnectPeriod: 0, connectTimeout: 5000 });
    try {
      await client.subscribeAsync('runnel/test');
      const received = new Promise<string>((resolve) => client.once('message', (_topic, payload) => resolve(payload.toString())));
      await client.publishAsync('runnel/test', 'hello broker');
      assert.equal(await received, 'hello broker');
      const events = await capture.waitFor('broker', 2, 5000);
      const ready = events.find((m) => m.topic === 'clientReady');
      assert.equal(ready?.payload.client.id, 'popular-test');
    } finally {
      await client.endAsync();
    }
  });

  moduleTest('node-red-contrib-web-worldmap', '5.8.1', 'a worldmap node serves its page under httpNodeRoot', async () => {
    await onTab([flowNode('map', 'worldmap', [], { lat: '', lon: '', zoom: '', layer: 'OSMG', cluster: '', maxage: '', usermenu: 'show', layers: 'show', panit: 'false', panlock: 'false', zoomlock: 'false', hiderightclick: 'false', coords: 'none', showgrid: 'false', allowFileDrop: 'false', path: '/worldmap', overlist: 'DR', maplist: 'OSMG', mapname: '', mapurl: '', mapopt: '', mapwms: false })]);
    const page = await fetch(server.at('worldmap/'));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<html/i);
  });

  moduleTest('node-red-contrib-home-assistant-websocket', '0.80.3', 'its flows:started handler reads the deploy payload: every deploy type answers and the next start works', async () => {
    const flows = [flowNode('a', 'inject', [['b']], { props: [{ p: 'payload' }], payload: '', payloadType: 'date' }), flowNode('b', 'debug', [], { active: false })];
    await onTab(flows);
    for (const type of ['nodes', 'flows']) {
      const res = await api('flows', { method: 'POST', json: [{ id: TAB, type: 'tab', label: 'ecosystem' }, ...flows, flowNode(`c-${type}`, 'debug', [], { active: false })], headers: { 'node-red-deployment-type': type } });
      assert.equal(res.status, 204, res.text);
    }
    assert.ok(!server.logs.some((l) => l.includes('a handler of the runtime event flows:started failed')), 'its handler ran without failing');
  });

  moduleTest('node-red-contrib-uibuilder', '7.7.4', 'its runtime plugin loads (node-red.plugins) and GET /plugins lists it', async () => {
    const plugins = await api('plugins', { headers: { accept: 'application/json' } });
    const runtimePlugin = (plugins.body as { id: string; plugins: { id: string }[]; err?: string }[]).find((p) => p.id === 'node-red-contrib-uibuilder/uib-runtime-plugin');
    assert.ok(runtimePlugin, JSON.stringify(plugins.body));
    assert.equal(runtimePlugin.err, undefined);
    assert.deepEqual(runtimePlugin.plugins.map((p) => p.id), ['uib-runtime-plugin']);
  });

  moduleTest('@flowfuse/node-red-dashboard', '1.31.0', 'every widget set shares the module\'s store: twelve widget types start; /dashboard pages answer (res.sendFile)', async () => {
    const grp = { group: 'ff-grp' };
    await onTab([
      { id: 'ff-base', type: 'ui-base', name: 'UI', path: '/dashboard', includeClientData: true, acceptsClientConfig: ['ui-notification', 'ui-control'], showPathInSidebar: false, navigationStyle: 'default' },
      { id: 'ff-theme', type: 'ui-theme', name: 'Default', colors: { surface: '#ffffff', primary: '#0094CE', bgPage: '#eeeeee', groupBg: '#ffffff', groupOutline: '#cccccc' }, sizes: { pagePadding: '12px', groupGap: '12px', groupBorderRadius: '4px', widgetGap: '12px' } },
      { id: 'ff-page', type: 'ui-page', name: 'P', ui: 'ff-base', path: '/page1', icon: 'home', layout: 'grid', theme: 'ff-theme', order: 1, className: '', visible: 'true', disabled: 'false' },
      { id: 'ff-grp', type: 'ui-group', name: 'G', page: 'ff-page', width: '6', height: '1', order: 1, showTitle: true, className: '', visible: 'true', disabled: 'false' },
      flowNode('w1', 'ui-text', [], { ...grp, order: 1, width: 0, height: 0, label: 'text', format: '{{msg.payload}}', layout: 'row-spread' }),
      flowNode('w2', 'ui-button', [[]], { ...grp, label: 'b', order: 2, width: 0, height: 0, passthru: true, payload: 'x', payloadType: 'str', topic: 'topic', topicType: 'msg' }),
      flowNode('w3', 'ui-chart', [[]], { ...grp, label: 'c', order: 3, chartType: 'line', category: 'topic', categoryType: 'msg', xAxisType: 'time', yAxisProperty: 'payload', action: 'append', removeOlder: 1, removeOlderUnit: '3600', colors: [], width: 6, height: 3 }),
      flowNode('w4', 'ui-template', [[]], { ...grp, order: 4, width: 0, height: 0, head: '', format: '<div>{{msg.payload}}</div>', storeOutMessages: true, passthru: true, resendOnRefresh: true, templateScope: 'local' }),
      flowNode('w5', 'ui-slider', [[]], { ...grp, label: 's', order: 5, width: 0, height: 0, passthru: false, outs: 'end', topic: 'topic', topicType: 'msg', min: 0, max: 10, step: 1 }),
      flowNode('w6', 'ui-switch', [[]], { ...grp, label: 'sw', order: 6, width: 0, height: 0, passthru: false, decouple: false, topic: 'topic', topicType: 'msg', evaluate: 'true', onvalue: 'true', onvalueType: 'bool', offvalue: 'false', offvalueType: 'bool' }),
      flowNode('w7', 'ui-gauge', [], { ...grp, gtype: 'gauge-half', gstyle: 'needle', title: 'g', order: 7, value: 'payload', valueType: 'msg', width: 3, height: 3, min: 0, max: 10, segments: [{ from: '0', color: '#5cd65c' }] }),
      flowNode('w8', 'ui-table', [[]], { ...grp, label: 't', order: 8, width: 0, height: 0, maxrows: 0, passthru: false, autocols: true, columns: [] }),
      flowNode('w9', 'ui-markdown', [[]], { ...grp, order: 9, width: 0, height: 0, content: '# hi' }),
      flowNode('w10', 'ui-notification', [[]], { ui: 'ff-base', position: 'top right', colorDefault: true, displayTime: '3', showCountdown: true, outputs: 1, allowDismiss: true, dismissText: 'Close', raw: false }),
      flowNode('w11', 'ui-dropdown', [[]], { ...grp, label: 'd', order: 10, width: 0, height: 0, passthru: false, multiple: false, options: [{ label: 'a', value: 'a', type: 'str' }], topic: 'topic', topicType: 'msg' }),
      flowNode('w12', 'ui-text-input', [[]], { ...grp, label: 'ti', order: 11, width: 0, height: 0, topic: 'topic', topicType: 'msg', mode: 'text', delay: 300, passthru: true, sendOnBlur: true, sendOnEnter: true }),
    ]);
    assert.equal((await api('flows/state')).body.errors, undefined);
    for (const page of ['dashboard/', 'dashboard/page1']) {
      const res = await fetch(server.at(page));
      assert.equal(res.status, 200, page);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    }
    await inBrowser('dashboard/page1', 'flowfuse-dashboard', (page) => page.waitForSelector('h1:has-text("hi")', { timeout: 30_000 }));
  });
});
