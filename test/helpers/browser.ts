import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './process.js';

/** Debian's chromium (installed by .ci/run); playwright cannot download a browser here. */
export const CHROMIUM = process.env.RUNNEL_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of browser tests, kept out of git (.tmp/ is ignored). */
export const SCREENSHOTS = path.join(ROOT, '.tmp', 'screenshots');

/**
 * The bound of every wait on a page (Playwright's default is 30 s): generous, since it only matters
 * when what is awaited never comes, and a loaded 2-core machine runs the editor many times slower
 * than a quiet one. Tests wait for what the page shows, never for fixed times.
 */
export const PAGE_WAIT_MS = 90_000;

/** Headless Chromium with the switches a closed network needs (no update, sync or component checks). */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: PAGE_WAIT_MS,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
}

export interface WatchedPage {
  page: Page;
  /** Console errors and uncaught page errors, in order. */
  errors: string[];
  /** Requests the page made, as `METHOD path status`. */
  requests: string[];
  /** URLs of the websockets the page opened. */
  sockets: string[];
  shot(name: string): Promise<string>;
}

/** A page whose console errors and requests are recorded, with a screenshot helper. */
export async function watchedPage(browser: Browser, prefix: string): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'en-US' });
  context.setDefaultTimeout(PAGE_WAIT_MS);
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  const sockets: string[] = [];
  page.on('websocket', (ws) => sockets.push(ws.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('response', (r) => requests.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`));
  await mkdir(SCREENSHOTS, { recursive: true });
  return {
    page,
    errors,
    requests,
    sockets,
    shot: async (name) => {
      const file = path.join(SCREENSHOTS, `${prefix}-${name}.png`);
      await page.screenshot({ path: file });
      return file;
    },
  };
}
