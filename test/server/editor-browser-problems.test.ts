import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { paletteTypes, turnTipsOff } from '../helpers/editor-page.js';
import { deploy } from '../helpers/deploy.js';

const FLOWS = [{ id: 'r1', type: 'http request', z: 'tab1', name: 'with a password', method: 'GET', url: 'http://127.0.0.1:9/', x: 200, y: 120, wires: [[]] }];
const THEME = { editorTheme: { palette: { catalogues: [] }, tours: false } };

const BROKEN = { id: 'fn1', type: 'function', z: 'tab1', name: 'typo', func: 'msg.payload = 1;;)\nreturn msg;', outputs: 1, x: 200, y: 200, wires: [] };

describe('the editor in Chromium shows what cannot work: credentials that do not decrypt, nodes that cannot work as configured', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;

  before(async () => {
    const first = await startServer({ ...THEME, credentialSecret: 'the key that encrypted them' });
    await deploy(first, FLOWS, { tab: 'tab1', api: 'v2', credentials: { r1: { user: 'u', password: 'p' } } });
    await first.stop();
    server = await startServer({ ...THEME, credentialSecret: 'another key' }, first.userDir);
    await turnTipsOff(server);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it("shows Node-RED's \"Credentials could not be decrypted\" warning, which the next deploy closes", async () => {
    w = await watchedPage(browser, 'problems');
    const { page } = w;
    await page.goto(server.url);
    await paletteTypes(page);
    const warning = page.locator('.red-ui-notification:has-text("Credentials could not be decrypted")');
    await warning.waitFor({ state: 'visible' });
    await page.waitForSelector('#red-ui-tab-tab1');
    await w.shot('01-credentials-warning');
    const text = await warning.innerText();
    assert.match(text, /The flow credential file will be reset on the next deployment/);
    assert.equal(await warning.getByRole('button', { name: 'Close' }).count(), 1, 'the warning has its Close button');
    assert.equal((await request(server.at('flows/state'))).body.errors[0].id, 'credentials');
    await deploy(server, FLOWS, { tab: 'tab1', api: 'v2' });
    await warning.waitFor({ state: 'detached' });
    await w.shot('02-after-deploy');
    await eventually(async () => (await request(server.at('flows/state'))).body.errors === undefined);
    assert.deepEqual(w.errors, []);
  });

  it("shows a node's construction error in the debug sidebar, as Node-RED does, and GET /flows/state lists it", async () => {
    const { page } = w;
    await deploy(server, [...FLOWS, BROKEN], { tab: 'tab1', api: 'v2' });
    await page.reload();
    await paletteTypes(page);
    await page.waitForSelector('#fn1');
    await page.evaluate(() => (globalThis as any).RED.sidebar.show('debug'));
    // Restarting the flows builds the function again: its syntax error reaches the sidebar.
    await page.click('#red-ui-header-button-deploy-options');
    await page.click('#deploymenu-item-reload');
    const shown = page.locator('.red-ui-debug-msg-level-20').filter({ hasText: 'Unexpected token' });
    await shown.first().waitFor({ state: 'visible' });
    assert.match(await shown.first().innerText(), /typo/, 'the message names the node');
    await w.shot('03-node-error-in-debug-sidebar');
    const state = (await request(server.at('flows/state'))).body;
    assert.deepEqual(state.errors.map((e: { id: string }) => e.id), ['fn1']);
    assert.deepEqual(w.errors, []);
  });
});
