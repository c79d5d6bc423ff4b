import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { eventually, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { packageRegistry, type LoopbackRegistry } from '../helpers/registry.js';
import { paletteTypes, turnTipsOff } from '../helpers/editor-page.js';
import { copyFixture, npmPack } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';

const SHOUT = 'node-red-contrib-shout';

const FLOW = [
  { id: 'tab1', type: 'tab', label: 'Palette' },
  { id: 'inj1', type: 'inject', z: 'tab1', name: 'word', props: [{ p: 'payload', v: 'quiet', vt: 'str' }], repeat: '', once: false, x: 160, y: 80, wires: [['sh1']] },
  { id: 'sh1', type: 'shout', z: 'tab1', x: 320, y: 80, wires: [['dbg1']] },
  { id: 'dbg1', type: 'debug', z: 'tab1', name: 'shouted', active: true, tosidebar: true, complete: 'payload', x: 480, y: 80, wires: [] },
];
const MISSING = { id: 'ghost', type: 'node-red-contrib-ghost', z: 'tab1', x: 160, y: 200, wires: [] };

/** The shout fixture packed in the given version (2.0.0 shouts twice as loud). */
async function packShout(work: string, version: string): Promise<Buffer> {
  const dir = await copyFixture(SHOUT, work, `shout-${version}`);
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
  if (version === '2.0.0') {
    const code = await readFile(path.join(dir, 'shout.js'), 'utf8');
    await writeFile(path.join(dir, 'shout.js'), code.replace("+ '!'", "+ '!!'"));
  }
  const packed = path.join(work, `packed-${version}`);
  await mkdir(packed);
  return readFile(await npmPack(dir, packed));
}

/** A palette catalogue as Node-RED's editor reads it, served with CORS for the editor's origin. */
async function catalogueServer(modules: unknown[]): Promise<{ server: Server; url: string }> {
  const body = JSON.stringify({ name: 'Loopback catalogue', updated_at: new Date().toISOString(), modules });
  const server = createServer((_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Content-Type', 'application/json');
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalogue.json` };
}

async function pressAndRead(w: WatchedPage, text: string): Promise<void> {
  await w.page.evaluate(() => (globalThis as any).RED.sidebar.show('debug'));
  await w.page.click('#inj1 .red-ui-flow-node-button-button');
  await w.page.waitForSelector(`.red-ui-debug-msg:has-text("${text}")`);
}

describe('the editor in Chromium: missing node types, and updating a module from a palette catalogue', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  let work: string;
  let registry: LoopbackRegistry;
  let catalogue: { server: Server; url: string };
  const saved = { registry: process.env.npm_config_registry, cache: process.env.npm_config_cache };

  before(async () => {
    work = await tempDir('runnel-palette-');
    registry = await packageRegistry({ [SHOUT]: { '1.0.0': await packShout(work, '1.0.0'), '2.0.0': await packShout(work, '2.0.0') } });
    // Every npm this process spawns (runNpm passes the environment on) asks the loopback registry.
    process.env.npm_config_registry = registry.url;
    process.env.npm_config_cache = path.join(work, 'npm-cache');
    catalogue = await catalogueServer([
      { id: SHOUT, version: '2.0.0', description: 'Shouts', updated_at: new Date().toISOString(), types: ['shout'], keywords: ['node-red'] },
    ]);
    server = await startServer({ editorTheme: { palette: { catalogues: [catalogue.url] }, tours: false } });
    await turnTipsOff(server);
    const installed = await request(server.at('nodes'), { method: 'POST', json: { module: SHOUT, version: '1.0.0' } });
    assert.equal(installed.status, 200, installed.text);
    const res = await request(server.at('flows'), { method: 'POST', json: [...FLOW, MISSING] });
    assert.equal(res.status, 204, res.text);
    browser = await launchBrowser();
    w = await watchedPage(browser, 'palette');
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    for (const key of ['registry', 'cache'] as const) {
      if (saved[key] === undefined) delete process.env[`npm_config_${key}`];
      else process.env[`npm_config_${key}`] = saved[key];
    }
    await new Promise((resolve) => registry?.server.close(resolve));
    await new Promise((resolve) => catalogue?.server.close(resolve));
    await removeDir(work);
  });

  it('says which node types are missing when the flows stop for them, and clears it once they are gone', async () => {
    const { page } = w;
    await page.goto(server.url);
    await paletteTypes(page);
    const notice = page.locator('.red-ui-notification').filter({ hasText: 'node-red-contrib-ghost' });
    await notice.waitFor();
    assert.match(await notice.innerText(), /missing node types/i);
    await w.shot('01-missing-types');
    assert.deepEqual((await request(server.at('flows/state'))).body.missingTypes, ['node-red-contrib-ghost']);
    // The page keeps the flows' state: the notice goes once a deploy without the type starts them.
    const res = await request(server.at('flows'), { method: 'POST', json: FLOW });
    assert.equal(res.status, 204, res.text);
    await notice.waitFor({ state: 'detached' });
    assert.equal((await request(server.at('flows/state'))).body.state, 'start');
  });

  it('offers the catalogue\'s newer version in the palette manager and installs it from the registry', async () => {
    const { page } = w;
    // The flows were deployed behind the page's back: a fresh load shows them.
    await page.reload();
    await paletteTypes(page);
    await page.click('#red-ui-tab-tab1');
    await page.waitForSelector('#inj1');
    await pressAndRead(w, 'QUIET!');
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:manage-palette', { view: 'nodes' }));
    const entry = page.locator('.red-ui-palette-module-header').filter({ hasText: SHOUT });
    await entry.locator('.red-ui-palette-module-meta.red-ui-palette-module-version:has-text("1.0.0")').waitFor();
    const update = entry.locator('a.red-ui-button:has-text("update to 2.0.0")');
    await update.waitFor();
    await w.shot('02-update-offered');
    await update.click();
    const confirm = page.locator('.red-ui-palette-module-install-confirm-button-update');
    await confirm.waitFor();
    await w.shot('03-update-confirm');
    await confirm.click();
    await eventually(async () => (await request(server.at(`nodes/${SHOUT}`))).body.version === '2.0.0', 120_000, 200);
    await entry.locator('.red-ui-palette-module-meta.red-ui-palette-module-version:has-text("2.0.0")').waitFor();
    await w.shot('04-updated');
    assert.ok(registry.requests.some((r) => r.endsWith(`${SHOUT}-2.0.0.tgz`)), registry.requests.join(', '));
    await page.getByRole('button', { name: 'Close' }).click();
    await pressAndRead(w, 'QUIET!!');
    assert.deepEqual(w.errors.filter((e) => !e.includes('catalogue')), []);
  });
});
