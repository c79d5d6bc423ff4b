import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { ADMIN_PASSWORD, adminAuth, eventually, login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { EXPECTED_PALETTE, FLOW, deploy, expectedFailure, importFlow, paletteTypes, pressInjectAndReadDebug, storedFlows, turnTipsOff } from '../helpers/editor-page.js';
import { copyFixture, npmPack } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';

describe('the editor in Chromium, with adminAuth', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  let work: string;

  before(async () => {
    work = await tempDir('runnel-browser-');
    server = await startServer({ adminAuth: adminAuth(), editorTheme: { palette: { catalogues: [] }, tours: false } });
    await turnTipsOff(server, await login(server));
    browser = await launchBrowser();
    w = await watchedPage(browser, 'auth');
  });
  after(async () => {
    await browser?.close();
    await server.dispose();
    await removeDir(work);
  });

  it('asks for a login, then loads the editor with the full core palette and no console errors', async () => {
    const { page } = w;
    await page.goto(server.url);
    await page.waitForSelector('#node-dialog-login-username', { state: 'visible' });
    await w.shot('01-login');
    await page.fill('#node-dialog-login-username', 'admin');
    await page.fill('#node-dialog-login-password', ADMIN_PASSWORD);
    await page.click('#node-dialog-login-submit');
    const types = await paletteTypes(page);
    for (const t of EXPECTED_PALETTE) assert.ok(types.includes(t), `palette lacks ${t}`);
    await page.waitForSelector('#red-ui-workspace-chart', { state: 'visible' });
    await w.shot('02-loaded');
    assert.deepEqual(w.errors.filter((e) => !expectedFailure(401)(e)), []);
    assert.ok(w.sockets.some((u) => u.endsWith('/comms')), 'the websocket opened');
  });

  it('imports a flow, deploys it, and shows debug output and status after an inject press', async () => {
    await importFlow(w, FLOW);
    await w.shot('03-imported');
    await deploy(w.page);
    await eventually(async () => (await storedFlows(server, await login(server))).some((n) => n.id === 'dbg1'));
    await pressInjectAndReadDebug(w);
    await w.shot('04-debug-and-status');
  });

  it('edits a node and redeploys modified nodes, modified flows and restarts flows', async () => {
    const { page } = w;
    const token = await login(server);
    for (const [type, name] of [['nodes', 'renamed once'], ['flows', 'renamed twice']] as const) {
      // The debug node's form has no Monaco editor, whose set-up races a quickly closed tray.
      await page.dblclick('#dbg1 .red-ui-flow-node');
      await page.waitForSelector('#node-input-name', { state: 'visible' });
      await page.fill('#node-input-name', name);
      await page.click('#node-dialog-ok');
      await page.waitForSelector('#node-input-name', { state: 'detached' });
      await deploy(page, type);
      await w.shot(`05-deployed-${type}`);
      await eventually(async () => (await storedFlows(server, token)).find((n) => n.id === 'dbg1')?.name === name);
    }
    await w.shot('05-edited');
    const before = server.instance.runtime.rev;
    await page.click('#red-ui-header-button-deploy-options');
    await page.click('#deploymenu-item-reload');
    await page.waitForSelector('.red-ui-notification:has-text("restarted")');
    assert.equal(server.instance.runtime.rev, before);
    await pressInjectAndReadDebug(w);
  });

  it('shows the merge dialog when the flows changed underneath', async () => {
    const { page } = w;
    const token = await login(server);
    const current = await storedFlows(server, token);
    const changed = current.map((n) => (n.id === 'fn1' ? { ...n, name: 'changed by a script' } : n));
    // For 300 ms after its own deploy the editor ignores deploy notices (they would be its own echo).
    await page.waitForSelector('.red-ui-deploy-button-spinner', { state: 'hidden' });
    assert.equal((await request(server.at('flows'), { method: 'POST', json: changed, token })).status, 204);
    // The editor learns of the deploy over /comms; its merge button expects that notice to exist.
    await page.waitForSelector('.red-ui-notification:has-text("updated")');
    await w.shot('05b-background-update');
    await page.dblclick('#inj1 .red-ui-flow-node');
    await page.waitForSelector('#node-input-name', { state: 'visible' });
    await page.fill('#node-input-name', 'pressed again');
    await page.click('#node-dialog-ok');
    await deploy(page, 'full');
    await page.waitForSelector('#red-ui-deploy-dialog-confirm-deploy-merge', { state: 'visible' });
    await w.shot('06-conflict');
    // Merging takes the server's change into the workspace; the next deploy sends both.
    await page.click('#red-ui-deploy-dialog-confirm-deploy-merge');
    await page.waitForSelector('#red-ui-deploy-dialog-confirm-deploy-merge', { state: 'detached' });
    await deploy(page);
    await eventually(async () => {
      const flows = await storedFlows(server, token);
      return flows.find((n) => n.id === 'inj1')?.name === 'pressed again' && flows.find((n) => n.id === 'fn1')?.name === 'changed by a script';
    }, 10_000);
  });

  it('installs a module from an uploaded tarball in the palette manager', async () => {
    const { page } = w;
    const dir = await copyFixture('node-red-contrib-shout', work);
    const tgz = await npmPack(dir, await tempDir('runnel-tgz-'));
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:manage-palette', { view: 'install' }));
    await page.setInputFiles('#red-ui-palette-editor-upload-form input[type="file"]', tgz);
    await page.click('.red-ui-palette-editor-upload-buttons .primary');
    await page.waitForSelector('.red-ui-palette-node[data-palette-type="shout"]', { timeout: 60_000 });
    await w.shot('07-uploaded');
    assert.ok(server.instance.runtime.registry.isKnownType('shout'));
    await page.getByRole('button', { name: 'Close' }).click();
  });

  it('logs out, revoking the token', async () => {
    const { page } = w;
    await page.evaluate(() => (globalThis as any).RED.settings.set('x', 1));
    await page.click('#red-ui-header-button-user');
    await page.click('#usermenu-item-logout');
    await page.waitForSelector('#node-dialog-login-username', { state: 'visible' });
    await w.shot('08-logged-out');
    assert.ok(w.requests.some((r) => r === 'POST /auth/revoke 200'));
    assert.deepEqual(w.errors.filter((e) => !expectedFailure(401)(e) && !expectedFailure(409)(e)), []);
  });
});

describe('the editor in Chromium, without adminAuth', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startServer({ editorTheme: { palette: { catalogues: [] }, tours: false } });
    await turnTipsOff(server);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server.dispose();
  });

  it('loads straight into the editor, deploys an imported flow and shows debug output', async () => {
    const w = await watchedPage(browser, 'open');
    await w.page.goto(server.url);
    const types = await paletteTypes(w.page);
    for (const t of EXPECTED_PALETTE) assert.ok(types.includes(t), `palette lacks ${t}`);
    await importFlow(w, FLOW);
    await deploy(w.page);
    await eventually(async () => (await storedFlows(server)).some((n) => n.id === 'dbg1'));
    await pressInjectAndReadDebug(w);
    await w.shot('01-debug');
    assert.deepEqual(w.errors, []);
  });
});
