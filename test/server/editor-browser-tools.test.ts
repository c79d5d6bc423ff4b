import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { eventually, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { deploy, paletteTypes, storedFlows, turnTipsOff } from '../helpers/editor-page.js';
import { copyFixture, npmPack } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';

const FLOW = [
  { id: 'tab1', type: 'tab', label: 'Tools' },
  { id: 'inj1', type: 'inject', z: 'tab1', name: 'reading', props: [{ p: 'payload', v: '{"reading":{"temp":21.5,"unit":"C"}}', vt: 'json' }], repeat: '', once: false, x: 160, y: 80, wires: [['dbg1']] },
  { id: 'dbg1', type: 'debug', z: 'tab1', name: 'out', active: true, tosidebar: true, complete: 'payload', x: 400, y: 80, wires: [] },
  { id: 'inj2', type: 'inject', z: 'tab1', name: 'word', props: [{ p: 'payload', v: 'quiet', vt: 'str' }], repeat: '', once: false, x: 160, y: 160, wires: [['sh1']] },
  { id: 'sh1', type: 'shout', z: 'tab1', x: 320, y: 160, wires: [['dbg2']] },
  { id: 'dbg2', type: 'debug', z: 'tab1', name: 'shouted', active: true, tosidebar: true, complete: 'payload', x: 480, y: 160, wires: [] },
];

/** The fixture module in the given version (version 2 shouts twice as loud), as a folder. */
async function shoutModule(work: string, version: '1.0.0' | '2.0.0'): Promise<string> {
  const dir = await copyFixture('node-red-contrib-shout', work, `shout-${version}`);
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
  if (version === '2.0.0') {
    const code = await readFile(path.join(dir, 'shout.js'), 'utf8');
    await writeFile(path.join(dir, 'shout.js'), code.replace("+ '!'", "+ '!!'"));
  }
  return dir;
}

/** Uploads a module tarball in the palette manager's install tab. */
async function upload(w: WatchedPage, tgz: string): Promise<void> {
  const { page } = w;
  await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:manage-palette', { view: 'install' }));
  await page.setInputFiles('#red-ui-palette-editor-upload-form input[type="file"]', tgz);
  await page.click('.red-ui-palette-editor-upload-buttons .primary');
}

async function pressAndRead(w: WatchedPage, inject: string, text: string): Promise<void> {
  await w.page.evaluate(() => (globalThis as any).RED.sidebar.show('debug'));
  await w.page.click(`#${inject} .red-ui-flow-node-button-button`);
  await w.page.waitForSelector(`.red-ui-debug-msg:has-text("${text}")`);
}

describe('the editor in Chromium: palette upgrade, debug copy tools, runtime notifications', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  let work: string;

  before(async () => {
    work = await tempDir('runnel-browser-');
    server = await startServer({ editorTheme: { palette: { catalogues: [] }, tours: false }, runtimeState: { enabled: true, ui: true } });
    await turnTipsOff(server);
    const installed = await request(server.at('nodes'), { method: 'POST', json: { module: await shoutModule(work, '1.0.0') } });
    assert.equal(installed.status, 200, installed.text);
    const res = await request(server.at('flows'), { method: 'POST', json: FLOW });
    assert.equal(res.status, 204, res.text);
    browser = await launchBrowser();
    w = await watchedPage(browser, 'tools');
    // Copies go through a hidden textarea and document.execCommand('copy'): record what was copied.
    await w.page.addInitScript(() => {
      const g = globalThis as any;
      g.__copied = [];
      g.document.addEventListener('copy', (e: any) => {
        const t = e.target;
        g.__copied.push(typeof t?.value === 'string' ? t.value.substring(t.selectionStart, t.selectionEnd) : String(g.getSelection()));
      });
    });
    await w.page.goto(server.url);
    await paletteTypes(w.page);
    await w.page.click('#red-ui-tab-tab1');
    await w.page.waitForSelector('#inj1');
  });
  after(async () => {
    await browser?.close();
    await server.dispose();
    await removeDir(work);
  });

  it('copies the path and the value of a property of a debug message', async () => {
    const { page } = w;
    await pressAndRead(w, 'inj1', 'reading');
    const msg = page.locator('.red-ui-debug-msg').filter({ hasText: 'reading' }).last();
    // Expand the object, then its `reading` property, down to `temp`.
    const row = (key: string) => msg.locator(`.red-ui-debug-msg-row:has(> .red-ui-debug-msg-object-key:text-is("${key}"))`).first();
    await msg.locator('.red-ui-debug-msg-top-level > .red-ui-debug-msg-row').click();
    await row('reading').click();
    const temp = row('temp');
    await temp.waitFor({ state: 'visible' });
    await temp.hover();
    await w.shot('01-debug-tools');
    await temp.locator('button:has(.fa-terminal)').click();
    await page.waitForSelector('.red-ui-popover:has-text("Path copied")');
    await temp.hover();
    await temp.locator('button:has(.fa-clipboard)').click();
    await page.waitForSelector('.red-ui-popover:has-text("Value copied")');
    await w.shot('02-value-copied');
    const copied = await page.evaluate(() => (globalThis as any).__copied as string[]);
    assert.deepEqual(copied, ['payload.reading.temp', '21.5']);
  });

  it('upgrades an installed module by uploading its next version; the deployed node runs the new code', async () => {
    const { page } = w;
    await pressAndRead(w, 'inj2', 'QUIET!');
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:manage-palette', { view: 'nodes' }));
    const entry = page.locator('.red-ui-palette-module-header:has-text("node-red-contrib-shout")');
    await entry.locator('.red-ui-palette-module-version:has-text("1.0.0")').waitFor();
    await w.shot('03-installed-1.0.0');
    const packed = path.join(work, 'packed');
    await mkdir(packed);
    await upload(w, await npmPack(await shoutModule(work, '2.0.0'), packed));
    await page.waitForSelector('.red-ui-notification:has-text("upgraded to version 2.0.0")', { timeout: 120_000 });
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:manage-palette', { view: 'nodes' }));
    await entry.locator('.red-ui-palette-module-version:has-text("2.0.0")').waitFor();
    await w.shot('04-upgraded-2.0.0');
    assert.equal((await request(server.at('nodes/node-red-contrib-shout'))).body.version, '2.0.0');
    await page.getByRole('button', { name: 'Close' }).click();
    await pressAndRead(w, 'inj2', 'QUIET!!');
    assert.deepEqual(w.errors, []);
  });

  it('stops and starts the flows from the deploy menu, and tells the user', async () => {
    const { page } = w;
    await page.click('#red-ui-header-button-deploy-options');
    await page.click('#deploymenu-item-runtime-stop');
    await page.waitForSelector('.red-ui-notification:has-text("Flows stopped")');
    await page.waitForSelector('#inj1 .red-ui-flow-node-button-stopped', { state: 'attached' });
    await page.waitForSelector('.red-ui-deploy-button-spinner', { state: 'hidden' });
    await w.shot('05-flows-stopped');
    assert.equal((await request(server.at('flows/state'))).body.state, 'stop');
    // A deploy meanwhile is saved, and the flows stay stopped.
    await page.dblclick('#dbg1 .red-ui-flow-node');
    await page.waitForSelector('#node-input-name', { state: 'visible' });
    await page.fill('#node-input-name', 'renamed while stopped');
    await page.click('#node-dialog-ok');
    await page.waitForSelector('#node-input-name', { state: 'detached' });
    await deploy(page);
    await eventually(async () => (await storedFlows(server)).find((n) => n.id === 'dbg1')?.name === 'renamed while stopped');
    assert.equal((await request(server.at('flows/state'))).body.state, 'stop');
    await page.click('#red-ui-header-button-deploy-options');
    await page.click('#deploymenu-item-runtime-start');
    await page.waitForSelector('.red-ui-notification:has-text("Flows started")');
    await page.waitForSelector('.red-ui-deploy-button-spinner', { state: 'hidden' });
    await w.shot('06-flows-started');
    assert.equal((await request(server.at('flows/state'))).body.state, 'start');
    assert.equal(await page.locator('#inj1 .red-ui-flow-node-button-stopped').count(), 0);
    assert.deepEqual(w.errors, []);
  });
});
