import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadSettingsFile } from '../../src/settings/file.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { RunnelOptions } from '../../src/runnel.js';
import { browse, CLIENT_ID, CLIENT_SECRET, type CookieJar, signIn, startProvider, type TestProvider } from './oidc-provider.js';

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
}

/**
 * Node-RED's documented passport-openidconnect recipe, unchanged but for the provider's addresses:
 * the Strategy class required from the user dir, a verify of five arguments, and a users function
 * (here reading a file beside settings.js, so a test can take a user away).
 */
export function recipe(issuer: string, callbackURL: string, port: number, extras: RecipeExtras = {}): string {
  return `const fs = require("fs");
const path = require("path");
module.exports = {
  uiPort: ${port},
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
        callbackURL: "${callbackURL}",
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
export async function recipeDir(dir: string, issuer: string, callbackURL: string, port: number, extras: RecipeExtras = {}): Promise<Record<string, unknown>> {
  await mkdir(dir, { recursive: true });
  // A retry on another port writes the same dir again.
  await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir').catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw e;
  });
  await writeFile(path.join(dir, 'allowed.json'), JSON.stringify(['alice']));
  await writeFile(path.join(dir, 'settings.js'), recipe(issuer, callbackURL, port, extras));
  return (await loadSettingsFile(path.join(dir, 'settings.js'))).raw;
}

/** A provider whose client calls back to `port`, and Runnel started there from the recipe in `dir`. */
export async function startRecipe(port: number, dir: string, extras: RecipeExtras = {}, options: Pick<RunnelOptions, 'clock' | 'editorLogin'> = {}): Promise<{ provider: TestProvider; server: TestServer; callbackURL: string }> {
  const callbackURL = `http://127.0.0.1:${port}/auth/strategy/callback`;
  const provider = await startProvider(callbackURL);
  try {
    const server = await startServer(await recipeDir(dir, provider.issuer, callbackURL, port, extras), dir, options);
    return { provider, server, callbackURL };
  } catch (e) {
    await provider.close();
    throw e;
  }
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
export function landing(res: Response, server: TestServer): URLSearchParams {
  assert.equal(res.status, 302);
  const location = new URL(res.headers.get('location')!, server.url);
  assert.equal(location.pathname, '/');
  return location.searchParams;
}
