import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { deploy, paletteTypes, storedFlows, turnTipsOff } from '../helpers/editor-page.js';

/**
 * The queue nodes in the unchanged editor: placed from the palette, edited in their own dialogs
 * with their help in the sidebar, wired, deployed, and a message sent through the queue.
 */

const FLOW = [
  { id: 'tab1', type: 'tab', label: 'Queues' },
  { id: 'inj1', type: 'inject', z: 'tab1', name: 'order', props: [{ p: 'payload', v: 'order 1', vt: 'str' }], repeat: '', once: false, x: 140, y: 100, wires: [] },
  { id: 'dbg1', type: 'debug', z: 'tab1', name: 'processed', active: true, tosidebar: true, complete: 'true', x: 760, y: 260, wires: [] },
];

/** Drags a type from the palette onto the workspace, as a user does; answers the new node's id. */
async function place(page: Page, type: string, x: number, y: number): Promise<string> {
  const entry = page.locator(`.red-ui-palette-node[data-palette-type="${type}"]`);
  // The network category is below the fold of the palette.
  await entry.scrollIntoViewIfNeeded();
  const from = await entry.boundingBox();
  const chart = await page.locator('#red-ui-workspace-chart').boundingBox();
  assert.ok(from && chart);
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.mouse.down();
  // jQuery UI's draggable starts after the pointer moved a little, then follows it.
  await page.mouse.move(from.x + from.width / 2 + 20, from.y + from.height / 2, { steps: 5 });
  await page.mouse.move(chart.x + x, chart.y + y, { steps: 20 });
  await page.mouse.up();
  const id = await page.evaluate((t) => (globalThis as any).RED.nodes.filterNodes({ type: t })[0]?.id as string | undefined, type);
  assert.ok(id, `${type} was placed`);
  await page.locator(`[id="${id}"]`).waitFor();
  return id;
}

/** Draws a wire from a node's first output to another node's input. */
async function wire(page: Page, from: string, to: string): Promise<void> {
  const out = await page.locator(`[id="${from}"] .red-ui-flow-port-output`).first().boundingBox();
  const input = await page.locator(`[id="${to}"] .red-ui-flow-port-input`).first().boundingBox();
  assert.ok(out && input);
  await page.mouse.move(out.x + out.width / 2, out.y + out.height / 2);
  await page.mouse.down();
  await page.mouse.move(input.x + input.width / 2, input.y + input.height / 2, { steps: 10 });
  await page.mouse.up();
}

/** Opens a node's edit dialog and shows its help in the sidebar. */
async function edit(page: Page, id: string): Promise<void> {
  await page.dblclick(`[id="${id}"] .red-ui-flow-node`);
  await page.waitForSelector('#node-input-queue', { state: 'visible' });
  await page.evaluate(() => (globalThis as any).RED.sidebar.show('help'));
}

async function closeDialog(page: Page): Promise<void> {
  await page.click('#node-dialog-ok');
  await page.waitForSelector('#node-input-queue', { state: 'detached' });
}

describe('the queue nodes in the editor, in Chromium', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  const ids = { out: '', in: '' };

  before(async () => {
    server = await startServer({ editorTheme: { palette: { catalogues: [] }, tours: false }, queues: { pollMs: 50 } });
    await turnTipsOff(server);
    const res = await request(server.at('flows'), { method: 'POST', json: FLOW });
    assert.equal(res.status, 204, res.text);
    browser = await launchBrowser();
    w = await watchedPage(browser, 'queues');
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('offers queue out and queue in in the palette and places them on the workspace', async () => {
    const { page } = w;
    await page.goto(server.url);
    const types = await paletteTypes(page);
    assert.ok(types.includes('queue out') && types.includes('queue in'), types.join(', '));
    await page.click('#red-ui-tab-tab1');
    await page.waitForSelector('#inj1');
    ids.out = await place(page, 'queue out', 380, 100);
    ids.in = await place(page, 'queue in', 380, 260);
    await w.shot('01-placed');
  });

  it('edits queue out in its own dialog, with its help in the sidebar', async () => {
    const { page } = w;
    await edit(page, ids.out);
    for (const field of ['#node-input-whenFull', '#node-input-maxLength', '#node-input-name']) await page.waitForSelector(field, { state: 'visible' });
    await page.fill('#node-input-queue', 'orders');
    await page.selectOption('#node-input-whenFull', 'wait');
    await page.waitForSelector('.red-ui-help:has-text("Stores each message on a durable queue")');
    await w.shot('02-queue-out-dialog');
    await closeDialog(page);
  });

  it('edits queue in in its own dialog: concurrency, order key, attempts and timeout, with its help', async () => {
    const { page } = w;
    await edit(page, ids.in);
    for (const field of ['#node-input-concurrency', '#node-input-key', '#node-input-maxAttempts', '#node-input-timeout']) await page.waitForSelector(field, { state: 'visible' });
    assert.equal(await page.inputValue('#node-input-concurrency'), '1');
    assert.equal(await page.inputValue('#node-input-key'), 'topic');
    assert.equal(await page.inputValue('#node-input-maxAttempts'), '5');
    await page.fill('#node-input-queue', 'orders');
    await page.fill('#node-input-concurrency', '2');
    await page.waitForSelector('.red-ui-help:has-text("Takes messages off a durable queue")');
    await page.waitForSelector('.red-ui-help:has-text("Dead letters")');
    // Order by left empty: the field says what that means, as the help does.
    await page.fill('#node-input-key', '');
    assert.equal(await page.getAttribute('#node-input-key', 'placeholder'), 'empty: no order');
    await page.waitForSelector('.red-ui-help:has-text("With Order by left empty no message is held back")');
    await w.shot('03-queue-in-dialog');
    await closeDialog(page);
  });

  it('deploys the wired nodes and sends a message through the queue', async () => {
    const { page } = w;
    await wire(page, 'inj1', ids.out);
    await wire(page, ids.in, 'dbg1');
    await deploy(page);
    await page.waitForSelector('.red-ui-notification:has-text("Successfully deployed")');
    const stored = await eventually(async () => {
      const flows = await storedFlows(server);
      const out = flows.find((n) => n.id === ids.out);
      return out?.queue === 'orders' && flows.find((n) => n.id === 'inj1')?.wires[0]?.[0] === ids.out ? flows : undefined;
    });
    const queueIn = stored!.find((n) => n.id === ids.in)!;
    assert.deepEqual([queueIn.queue, queueIn.concurrency, queueIn.wires[0]], ['orders', '2', ['dbg1']]);
    assert.equal(stored!.find((n) => n.id === ids.out)!.whenFull, 'wait');
    await page.evaluate(() => (globalThis as any).RED.sidebar.show('debug'));
    await page.click('#inj1 .red-ui-flow-node-button-button');
    await page.waitForSelector('.red-ui-debug-msg:has-text("order 1")');
    await page.waitForSelector('.red-ui-debug-msg:has-text("redelivered")');
    await w.shot('04-message-through-queue');
    await eventually(async () => {
      const orders = (await request(server.at('queues'))).body.queues.find((q: { name: string }) => q.name === 'orders');
      return orders.depth === 0 && orders.consumers === 1;
    });
    assert.deepEqual(w.errors, []);
  });
});
