import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { expectedFailure, paletteTypes } from '../helpers/editor-page.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { startOidc, startRecipe } from '../auth/strategy-recipe.js';

/**
 * Single sign-on in Chromium with the unchanged editor, whichever login flow the served editor
 * uses (Node-RED 4's token in the URL, 5's code exchange): the editor's button, the provider's
 * real login and consent pages, and back into the editor.
 */
async function signInThroughProvider(w: WatchedPage, server: TestServer, label: string, username: string): Promise<void> {
  const { page } = w;
  await page.goto(server.url);
  const button = page.getByText(label);
  await button.waitFor({ state: 'visible' });
  await w.shot('01-editor-login');
  await button.click();
  await page.waitForSelector('input[name="login"]', { state: 'visible' });
  await w.shot('02-provider-login');
  await page.fill('input[name="login"]', username);
  await page.fill('input[name="password"]', 'any');
  await page.click('button[type="submit"]');
  // The provider asks for consent at a user's first login to the client.
  await page.waitForSelector('button:has-text("Continue"), #red-ui-workspace-chart', { state: 'visible' });
  if (new URL(page.url()).origin !== new URL(server.url).origin) {
    await w.shot('03-provider-consent');
    await page.click('button:has-text("Continue")');
  }
  await page.waitForSelector('#red-ui-workspace-chart', { state: 'visible' });
  assert.ok((await paletteTypes(page)).includes('inject'));
  await page.waitForSelector('#red-ui-header-button-user', { state: 'visible' });
  await w.shot('04-editor');
  assert.equal(new URL(page.url()).search, '', 'no token or code is left in the address bar');
  // The provider's pages import a web font from the internet (unreachable here) and have no favicon
  // (a request the page's response log does not list); the editor's requests all succeed.
  const providerPages = (e: string) => e.includes('net::ERR_NAME_NOT_RESOLVED') || expectedFailure(404)(e);
  assert.deepEqual(w.errors.filter((e) => !expectedFailure(401)(e) && !providerPages(e)), []);
  assert.deepEqual(w.requests.filter((r) => / [45]\d\d$/.test(r) && r !== 'GET /settings 401'), [], 'only the first settings request, before the login, is refused');
}

describe('single sign-on into the editor in Chromium', { timeout: 600_000 }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  it("logs in with Node-RED's passport-openidconnect recipe through the provider's pages", async () => {
    const dir = await tempDir();
    const { provider, server } = await startRecipe(dir, { settings: 'editorTheme: { tours: false },' });
    try {
      const w = await watchedPage(browser, 'sso-strategy');
      await signInThroughProvider(w, server, 'Sign in with OIDC', 'alice');
      assert.ok(w.requests.some((r) => r.startsWith('GET /auth/strategy/callback 302')));
    } finally {
      await server.stop();
      await provider.close();
      await removeDir(dir);
    }
  });

  it("logs in with the built-in OpenID Connect login, the user's group giving the permissions", async () => {
    const { provider, server } = await startOidc({
      groups: { alice: ['runnel-admins'] },
      settings: { editorTheme: { tours: false } },
      adminAuth: { permissions: { 'runnel-admins': '*' }, label: 'Sign in with the company account' },
    });
    try {
      const w = await watchedPage(browser, 'sso-oidc');
      await signInThroughProvider(w, server, 'Sign in with the company account', 'alice');
    } finally {
      await server.dispose();
      await provider.close();
    }
  });
});
