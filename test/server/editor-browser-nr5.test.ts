import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { paletteTypes, turnTipsOff } from '../helpers/editor-page.js';
import { copyFixture } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';

const FLOW = [
  { id: 'tab1', type: 'tab', label: 'Five' },
  { id: 'inj1', type: 'inject', z: 'tab1', name: 'tick', props: [{ p: 'payload', v: 'tick', vt: 'str' }], repeat: '', once: false, x: 160, y: 80, wires: [['fn1']] },
  {
    id: 'fn1', type: 'function', z: 'tab1', name: 'count', outputs: 1, x: 340, y: 80, wires: [['dbg1']],
    func: "const n = (flow.get('count') || 0) + 1;\nflow.set('count', n);\nglobal.set('colour', 'teal');\nmsg.payload = 'tick ' + n;\nreturn msg;",
  },
  { id: 'dbg1', type: 'debug', z: 'tab1', name: 'out', active: true, tosidebar: true, complete: 'payload', x: 520, y: 80, wires: [] },
];

/**
 * What the Node-RED 5 editor adds, against Runnel in Chromium: the welcome tour of 5.x and the
 * Explorer and Information panels, the debug sidebar's pause, the context sidebar, the dark theme
 * that outlives a reload, and the palette manager's plugin count and module removal.
 */
describe('the Node-RED 5 editor in Chromium: tour, sidebars, debug pause, dark theme, plugin count, palette remove', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  let work: string;

  const press = (page: WatchedPage['page']) => page.click('#inj1 .red-ui-flow-node-button-button');

  before(async () => {
    work = await tempDir('runnel-browser-');
    // Tours stay on: the 5.x welcome tour is what a first visit shows.
    server = await startServer({ editorTheme: { palette: { catalogues: [] } } });
    const installed = await request(server.at('nodes'), { method: 'POST', json: { module: await copyFixture('node-red-contrib-shout', work) } });
    assert.equal(installed.status, 200, installed.text);
    const plugins = await copyFixture('../shapes/node-red-contrib-shape-plugin', work, 'node-red-contrib-shape-plugin');
    const withPlugins = await request(server.at('nodes'), { method: 'POST', json: { module: plugins } });
    assert.equal(withPlugins.status, 200, withPlugins.text);
    assert.equal((await request(server.at('flows'), { method: 'POST', json: FLOW })).status, 204);
    await turnTipsOff(server);
    browser = await launchBrowser();
    w = await watchedPage(browser, 'nr5');
  });
  after(async () => {
    await browser?.close();
    await server.dispose();
    await removeDir(work);
  });

  it('runs the 5.x welcome tour to its end on a first visit, with Runnel in the header and the title', async () => {
    const { page } = w;
    // Marks each element that received focus, so the tour's buttons can be clicked once focused
    // even when a closing dialog takes focus back right after (below).
    await page.addInitScript(() => {
      const doc = (globalThis as any).document;
      doc.addEventListener('focusin', (e: any) => e.target?.setAttribute?.('data-test-focused', ''), true);
    });
    await page.goto(server.url);
    const popover = page.locator('.red-ui-tourGuide-popover');
    await popover.filter({ hasText: 'Welcome to Node-RED 5.0!' }).waitFor();
    await w.shot('01-welcome-tour');
    // The editor appends the open flow's name.
    assert.match(await page.title(), /^Runnel( : |$)/);
    assert.equal(await page.locator('#red-ui-header-logo span[title]').innerText(), 'Runnel');
    // Every step, with the images the tour loads from red/tours/, until its last button closes it.
    const steps = Number((await popover.locator('.red-ui-tourGuide-toolbar small').innerText()).split('/')[1]);
    assert.ok(steps > 5, `the tour has ${steps} steps`);
    for (let step = 1; step <= steps; step++) {
      // Each step builds a new popover and, 100 ms later, checks its position and then focuses its
      // button. The 5.0.7 editor's tour forgets its popover when it ends, so a Close clicked before
      // that check (no person is that fast) makes the check throw: click once the button was focused.
      const current = page.locator('.red-ui-tourGuide-popover').filter({ has: page.locator(`.red-ui-tourGuide-toolbar small:text-is("${step}/${steps}")`) });
      await current.locator('.red-ui-tourGuide-toolbar button[data-test-focused]').click();
    }
    await popover.waitFor({ state: 'detached' });
    assert.ok(w.requests.includes('GET /red/tours/welcome.js 200'), 'the tour module loaded');
    assert.deepEqual(w.requests.filter((r) => / (4|5)\d\d$/.test(r)), [], 'nothing the editor asked for was missing');
    assert.deepEqual(w.errors, [], 'the page threw nothing during the tour');
  });

  it('shows the flows in the Explorer panel and the selected node in the Information panel', async () => {
    const { page } = w;
    await paletteTypes(page);
    await page.evaluate(() => (globalThis as any).RED.sidebar.show('explorer'));
    await page.locator('.red-ui-info-outline :text-is("Five")').first().waitFor();
    await page.click('#red-ui-tab-tab1');
    await page.click('#fn1 .red-ui-flow-node');
    await page.evaluate(() => (globalThis as any).RED.sidebar.show('info'));
    await page.locator('.red-ui-info-table :text("fn1")').first().waitFor();
    await w.shot('02-explorer-and-information');
  });

  it('pauses the debug sidebar (dropped messages counted) and resumes it', async () => {
    const { page } = w;
    await page.evaluate(() => (globalThis as any).RED.sidebar.show('debug'));
    await press(page);
    await page.waitForSelector('.red-ui-debug-msg:has-text("tick 1")');
    await page.click('#red-ui-sidebar-debug-pause');
    await page.waitForSelector('#red-ui-sidebar-debug-pause .fa-play');
    await press(page);
    await press(page);
    await page.waitForSelector('.red-ui-debug-msg-paused:has-text("2")');
    await w.shot('03-debug-paused');
    assert.equal(await page.locator('.red-ui-debug-msg:has-text("tick 2")').count(), 0, 'nothing shown while paused');
    await page.click('#red-ui-sidebar-debug-pause');
    await press(page);
    await page.waitForSelector('.red-ui-debug-msg:has-text("tick 4")');
  });

  it('shows flow and global context in the context sidebar', async () => {
    const { page } = w;
    await page.evaluate(() => (globalThis as any).RED.sidebar.show('context'));
    // The refresh buttons of the Node, Flow and Global sections, in that order.
    const refresh = page.locator('button:has(.fa-refresh):visible');
    await refresh.nth(1).click();
    await refresh.nth(2).click();
    await page.locator('tr:has(.red-ui-sidebar-context-property:text-is("count"))').filter({ hasText: '4' }).waitFor();
    await page.locator('tr:has(.red-ui-sidebar-context-property:text-is("colour"))').filter({ hasText: 'teal' }).waitFor();
    await w.shot('04-context');
  });

  it('switches to the dark theme in the settings, and keeps it after a reload', async () => {
    const { page } = w;
    assert.equal(await page.evaluate(() => (globalThis as any).document.documentElement.classList.contains('nr-theme-dark')), false);
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:show-user-settings'));
    await page.selectOption('#user-settings-view-dark-theme', 'dark');
    await page.click('#node-dialog-ok');
    await page.waitForFunction(() => (globalThis as any).document.documentElement.classList.contains('nr-theme-dark'));
    await page.reload();
    await paletteTypes(page);
    await page.waitForFunction(() => (globalThis as any).document.documentElement.classList.contains('nr-theme-dark'));
    await w.shot('05-dark');
  });

  it("counts a module's plugins in the palette manager: the runtime's and the editor-only one", async () => {
    const { page } = w;
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:manage-palette', { view: 'nodes' }));
    const entry = page.locator('.red-ui-palette-module-header:has-text("node-red-contrib-shape-plugin")');
    await entry.locator(':text("2 plugins")').first().waitFor();
    await w.shot('06-plugin-count');
  });

  it('removes an installed module in the palette manager', async () => {
    const { page } = w;
    await page.waitForSelector('.red-ui-palette-node[data-palette-type="shout"]');
    const entry = page.locator('.red-ui-palette-module-header:has-text("node-red-contrib-shout")');
    await entry.locator('.red-ui-palette-module-button-group a:text-is("remove")').click();
    await page.locator('.red-ui-notification button:text-is("Remove")').click();
    await page.waitForSelector('.red-ui-palette-node[data-palette-type="shout"]', { state: 'detached', timeout: 120_000 });
    await entry.waitFor({ state: 'detached' });
    await w.shot('07-removed');
    assert.equal((await request(server.at('nodes/node-red-contrib-shout'))).status, 404);
    await page.getByRole('button', { name: 'Close' }).click();
    assert.deepEqual(w.errors, []);
  });
});
