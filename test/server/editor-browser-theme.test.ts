import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { paletteTypes, turnTipsOff } from '../helpers/editor-page.js';
import { copyFixture } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';

/**
 * A Node-RED 5 theme plugin in the 5.x editor in Chromium: node-red-contrib-theme-dusk's stylesheet
 * colours the header, its script runs, and its single `dark` scheme is forced on the editor.
 */
describe('a theme plugin in the Node-RED 5 editor in Chromium', { timeout: 600_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  let work: string;

  before(async () => {
    work = await tempDir('runnel-browser-theme-');
    server = await startServer({ editorTheme: { theme: 'dusk', palette: { catalogues: [] }, tours: false } });
    const installed = await request(server.at('nodes'), { method: 'POST', json: { module: await copyFixture('node-red-contrib-theme-dusk', work) } });
    assert.equal(installed.status, 200, installed.text);
    await turnTipsOff(server);
    browser = await launchBrowser();
    w = await watchedPage(browser, 'theme-plugin');
  });
  after(async () => {
    await browser?.close();
    await server.dispose();
    await removeDir(work);
  });

  it("draws the editor with the theme's stylesheet, script, header title and forced dark scheme", async () => {
    const { page } = w;
    await page.goto(server.url);
    await paletteTypes(page);
    await page.waitForFunction(() => (globalThis as any).document.documentElement.classList.contains('nr-theme-dark'));
    assert.equal(await page.evaluate(() => (globalThis as any).document.documentElement.getAttribute('data-dusk')), 'loaded');
    const header = await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.getElementById('red-ui-header')).backgroundColor);
    assert.equal(header, 'rgb(91, 42, 134)');
    assert.equal(await page.locator('#red-ui-header-logo span[title]').innerText(), 'Runnel at dusk');
    await w.shot('01-dusk');
    assert.ok(w.requests.includes('GET /theme/css/dusk.css 200') && w.requests.includes('GET /theme/scripts/dusk.js 200'), w.requests.join('\n'));
    assert.deepEqual(w.errors, []);
  });
});
