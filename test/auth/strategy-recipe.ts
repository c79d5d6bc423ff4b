import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadSettingsFile } from '../../src/settings/file.js';
import { request, startServer, type JsonResponse, type TestServer } from '../helpers/server.js';
import type { RunnelOptions } from '../../src/runnel.js';
import { browse, CLIENT_ID, CLIENT_SECRET, type CookieJar, type ProviderOptions, signIn, startProvider, type TestProvider } from './oidc-provider.js';

type ServerOptions = Pick<RunnelOptions, 'clock' | 'editorLogin'>;

/** What a test adds to the recipe, as JavaScript source. */
export interface RecipeExtras {
  /** The Passport strategy class; passport-openidconnect's by default. */
  strategy?: string;
  /** More properties of `adminAuth.strategy.options`. */
  options?: string;
  /** More properties of `adminAuth`. */
  adminAuth?: string;
  /** More top-level settings. */
  settings?: string;
  /** The strategy's callbackURL; by default the path alone, which the strategy resolves against the request's host. */
  callbackURL?: string;
}

/**
 * Node-RED's documented passport-openidconnect recipe, unchanged but for the addresses: the
 * Strategy class required from the user dir, a verify of five arguments, and a users function
 * (here reading a file beside settings.js, so a test can take a user away). Runnel listens on port
 * 0, so the callbackURL is a path (passport-openidconnect, like passport-oauth2, resolves it against
 * the request's host) rather than the absolute URL a deployment writes.
 */
function recipe(issuer: string, extras: RecipeExtras): string {
  return `const fs = require("fs");
const path = require("path");
module.exports = {
  uiPort: 0,
  uiHost: "127.0.0.1",
  ${extras.settings ?? ''}
  adminAuth: {
    type: "strategy",
    strategy: {
      name: "openidconnect",
      label: "Sign in with OIDC",
      icon: "fa-cloud",
      strategy: ${extras.strategy ?? 'require("passport-openidconnect").Strategy'},
      options: {
        issuer: "${issuer}",
        authorizationURL: "${issuer}/auth",
        tokenURL: "${issuer}/token",
        userInfoURL: "${issuer}/me",
        clientID: "${CLIENT_ID}",
        clientSecret: "${CLIENT_SECRET}",
        callbackURL: "${extras.callbackURL ?? '/auth/strategy/callback'}",
        scope: ["email", "profile"],
        proxy: false,
        nonce: true,
        ${extras.options ?? ''}
        verify: function (issuer, profile, context, idToken, done) {
          done(null, profile);
        },
      },
    },
    users: function (username) {
      const allowed = JSON.parse(fs.readFileSync(path.join(__dirname, "allowed.json"), "utf8"));
      return Promise.resolve(allowed.includes(username) ? { username: username, permissions: "*" } : null);
    },
    ${extras.adminAuth ?? ''}
  },
};
`;
}

/**
 * A user dir for the recipe: node_modules as `npm install passport-openidconnect` there would give
 * it, `allowed.json` letting alice in, and settings.js. Returns the settings Runnel reads from it.
 */
export async function recipeDir(dir: string, issuer: string, extras: RecipeExtras = {}): Promise<Record<string, unknown>> {
  await mkdir(dir, { recursive: true });
  await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');
  await writeFile(path.join(dir, 'allowed.json'), JSON.stringify(['alice']));
  await writeFile(path.join(dir, 'settings.js'), recipe(issuer, extras));
  return (await loadSettingsFile(path.join(dir, 'settings.js'))).raw;
}

/**
 * Starts a provider and a Runnel with `start(issuer)`, both on port 0, then registers Runnel's
 * callback (and, with `backchannelLogout`, its back-channel logout URL) at the provider.
 */
async function withProvider(providerOptions: ProviderOptions, backchannelLogout: boolean, start: (issuer: string) => Promise<TestServer>): Promise<{ provider: TestProvider; server: TestServer }> {
  const provider = await startProvider(providerOptions);
  try {
    const server = await start(provider.issuer);
    provider.register({ callbackURL: server.at('auth/strategy/callback'), ...(backchannelLogout ? { backchannelLogoutURL: server.at('auth/backchannel-logout') } : {}) });
    return { provider, server };
  } catch (e) {
    await provider.close();
    throw e;
  }
}

/** A provider, and Runnel started from the recipe in `dir`, its callback registered there. */
export function startRecipe(dir: string, extras: RecipeExtras = {}, options: ServerOptions = {}): Promise<{ provider: TestProvider; server: TestServer }> {
  return withProvider({}, false, async (issuer) => startServer(await recipeDir(dir, issuer, extras), dir, options));
}

export interface OidcSetup extends ProviderOptions {
  /** Added to (or replacing) the `adminAuth` of `type: "oidc"` against the provider. */
  adminAuth?: Record<string, unknown>;
  /** More top-level settings. */
  settings?: Record<string, unknown>;
  options?: ServerOptions;
}

/** A provider with back-channel logout, and Runnel's built-in OIDC login against it. */
export function startOidc(setup: OidcSetup = {}): Promise<{ provider: TestProvider; server: TestServer }> {
  const { adminAuth, settings, options, ...providerOptions } = setup;
  return withProvider(providerOptions, true, (issuer) => startServer({
    ...settings,
    adminAuth: { type: 'oidc', issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scope: 'openid profile groups', ...adminAuth },
  }, undefined, options));
}

/**
 * Starts a login at `server`, signs `username` in at the provider and returns what the provider
 * sends the browser back with: the callback URL, and with form_post the form's fields.
 */
export async function untilCallback(jar: CookieJar, server: TestServer, issuer: string, username: string): Promise<{ url: string; form?: URLSearchParams }> {
  const start = await browse(jar, server.at('auth/strategy'));
  assert.equal(start.status, 302);
  const toProvider = start.headers.get('location')!;
  assert.ok(toProvider.startsWith(`${issuer}/auth?`), toProvider);
  return signIn(jar, toProvider, username);
}

/** The editor URL a login ended at: its `code`, `access_token` or `session_message`. */
export function landing(res: Response, server: Pick<TestServer, 'url'>): URLSearchParams {
  assert.equal(res.status, 302);
  const location = new URL(res.headers.get('location')!, server.url);
  assert.equal(location.pathname, '/');
  return location.searchParams;
}

/** POST /auth/token as Node-RED 5's editor sends it after a strategy login: the code alone, as a form. */
export function exchange(server: Pick<TestServer, 'at'>, code: string): Promise<JsonResponse> {
  return request(server.at('auth/token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ code }).toString() });
}
