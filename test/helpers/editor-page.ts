import type { Page } from 'playwright-core';
import { request, type TestServer } from './server.js';
import type { WatchedPage } from './browser.js';

/** What browser tests of the Node-RED editor do on its page. */

export const FLOW = [
  { id: 'tab1', type: 'tab', label: 'Editor test' },
  { id: 'inj1', type: 'inject', z: 'tab1', name: 'press me', props: [{ p: 'payload', v: 'hello from the editor', vt: 'str' }], repeat: '', once: false, x: 160, y: 480, wires: [['fn1']] },
  { id: 'fn1', type: 'function', z: 'tab1', name: 'mark', func: "node.status({fill: 'green', shape: 'dot', text: 'got ' + msg.payload.length});\nreturn msg;", outputs: 1, x: 360, y: 480, wires: [['dbg1']] },
  { id: 'dbg1', type: 'debug', z: 'tab1', name: 'out', active: true, tosidebar: true, complete: 'payload', x: 560, y: 480, wires: [] },
];

/** Core types Runnel runs that the palette must show (editor.test.ts checks it defines no type Runnel lacks). */
export const EXPECTED_PALETTE = ['inject', 'debug', 'complete', 'catch', 'status', 'link in', 'link call', 'link out', 'comment', 'function', 'switch', 'change', 'range', 'template', 'delay', 'trigger', 'exec', 'rbe', 'http in', 'http response', 'http request', 'split', 'join', 'sort', 'batch', 'csv', 'html', 'json', 'xml', 'yaml', 'file', 'file in', 'watch',
  'mqtt in', 'mqtt out', 'websocket in', 'websocket out', 'tcp in', 'tcp out', 'tcp request', 'udp in', 'udp out'];

/** What Chrome logs for an expected HTTP failure (the login's 401, the conflict's 409). */
export const expectedFailure = (status: number) => (e: string) => e.includes(`the server responded with a status of ${status}`);

export async function paletteTypes(page: Page): Promise<string[]> {
  await page.waitForSelector('.red-ui-palette-node[data-palette-type="inject"]');
  return page.$$eval('.red-ui-palette-node', (els) => els.map((e) => (e as any).dataset.paletteType ?? ''));
}

export async function importFlow(w: WatchedPage, flow: unknown[]): Promise<void> {
  const { page } = w;
  await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:show-import-dialog'));
  await page.waitForSelector('#red-ui-clipboard-dialog-import-text', { state: 'visible' });
  await page.fill('#red-ui-clipboard-dialog-import-text', JSON.stringify(flow));
  // The dialog validates on keyup.
  await page.press('#red-ui-clipboard-dialog-import-text', 'End');
  await page.click('#red-ui-clipboard-dialog-ok');
  await page.waitForSelector('#red-ui-clipboard-dialog-import-text', { state: 'hidden' });
  // The flow arrives on a tab of its own.
  await page.click('#red-ui-tab-tab1');
  await page.waitForSelector('#inj1');
}

export async function deploy(page: Page, type?: 'full' | 'nodes' | 'flows'): Promise<void> {
  if (type) {
    await page.click('#red-ui-header-button-deploy-options');
    await page.click(`#deploymenu-item-${type === 'nodes' ? 'node' : type === 'flows' ? 'flow' : 'full'}`);
  }
  await page.click('#red-ui-header-button-deploy');
}

/** The stored flows, read through the admin API. */
export async function storedFlows(server: TestServer, token?: string): Promise<Record<string, any>[]> {
  return (await request(server.at('flows'), { token })).body as Record<string, any>[];
}

export async function pressInjectAndReadDebug(w: WatchedPage): Promise<void> {
  const { page } = w;
  await page.evaluate(() => (globalThis as any).RED.sidebar.show('debug'));
  await page.click('#inj1 .red-ui-flow-node-button-button');
  await page.waitForSelector('.red-ui-debug-msg:has-text("hello from the editor")');
  await page.waitForSelector('#fn1 .red-ui-flow-node-status-label:has-text("got 21")');
}

/**
 * Turns the Information panel's rotating tips off for the user (anonymous without a token). The 5.x
 * editor starts the tips' 1 s timer from the user settings before the panel that shows them exists;
 * when loading takes longer, as on a busy 2-core machine, the timer throws "Cannot read properties
 * of undefined (reading 'html')" in the page. Nothing here tests the tips.
 */
/**
 * That tips timer's error, for tests whose user is only known once they log in through the page (a
 * single sign-on), so their tips cannot be turned off beforehand.
 */
export const tipsTimerRace = (e: string): boolean => e === "pageerror: Cannot read properties of undefined (reading 'html')";

export async function turnTipsOff(server: TestServer, token?: string): Promise<void> {
  const res = await request(server.at('settings/user'), { method: 'POST', token, json: { editor: { view: { 'view-show-tips': false } } } });
  if (res.status !== 204) throw new Error(`POST /settings/user answered ${res.status}: ${res.text}`);
}
