import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { expectedFailure, paletteTypes, tipsTimerRace } from '../helpers/editor-page.js';
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
  // Node-RED 5's editor: back with a one-time code, which it exchanged for its session.
  assert.ok(w.requests.includes('GET /auth/strategy/callback 302'));
  assert.ok(w.requests.includes('POST /auth/token 200'), 'the editor exchanged the code');
  await page.click('#red-ui-header-button-user');
  const signedIn = page.locator('#usermenu-item-username');
  await signedIn.waitFor({ state: 'visible' });
  assert.equal((await signedIn.textContent())?.trim(), username, 'the editor is the provider\'s user\'s');
  await w.shot('05-user-menu');
  // The provider's pages import a web font from the internet (unreachable here) and have no favicon
  // (a request the page's response log does not list); the editor's requests all succeed.
  const providerPages = (e: string) => e.includes('net::ERR_NAME_NOT_RESOLVED') || expectedFailure(404)(e);
  assert.deepEqual(w.errors.filter((e) => !expectedFailure(401)(e) && !providerPages(e) && !tipsTimerRace(e)), []);
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

  it('refuses a user of no mapped group, the login dialog saying so, and leaves the editor closed', async () => {
    const { provider, server } = await startOidc({
      groups: { mallory: ['staff'] },
      settings: { editorTheme: { tours: false } },
      adminAuth: { permissions: { 'runnel-admins': '*' }, label: 'Sign in with the company account' },
    });
    try {
      const { page, shot, requests } = await watchedPage(browser, 'sso-oidc-refused');
      await page.goto(server.url);
      await page.getByText('Sign in with the company account').click();
      await page.waitForSelector('input[name="login"]', { state: 'visible' });
      await page.fill('input[name="login"]', 'mallory');
      await page.fill('input[name="password"]', 'any');
      await page.click('button[type="submit"]');
      await page.click('button:has-text("Continue")');
      const refusal = page.getByText('AuthenticationError: Unauthorized');
      await refusal.waitFor({ state: 'visible' });
      await page.getByText('Sign in with the company account').waitFor({ state: 'visible' });
      await shot('01-refused');
      assert.equal(await page.locator('#red-ui-workspace-chart').isVisible(), false);
      assert.ok(!requests.some((r) => r.startsWith('POST /auth/token')), 'no code to exchange');
    } finally {
      await server.dispose();
      await provider.close();
    }
  });
});
