import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { startHaproxy, type TestBalancer } from '../helpers/haproxy.js';
import { ADMIN_PASSWORD, READER_PASSWORD, request } from '../helpers/server.js';

/**
 * Multiplayer presence in Chromium: editors on node0 and node2 and one through HAProxy (on any
 * instance) each show the other users' avatars in the header, whichever instance holds their /comms.
 */

describe('cluster: editors on different instances show each other\'s presence', { timeout: 600_000 }, () => {
  let nodes: ClusterInstance[];
  let balancer: TestBalancer;
  let browser: Browser;
  const suite = clusterSuite('mpbrowser', 3, { editorTheme: { multiplayer: { enabled: true }, palette: { catalogues: [] }, tours: false } });

  before(async () => {
    ({ nodes } = suite);
    // One tab every editor opens on, so a user's location there shows in the others'.
    const login = await request(nodes[0]!.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
    });
    const r = await request(nodes[0]!.at('flows'), { method: 'POST', token: login.body.access_token as string, json: [{ id: 'shared', type: 'tab', label: 'Shared' }] });
    assert.equal(r.status, 204, r.text);
    balancer = await startHaproxy(nodes.map((n) => n.url));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await balancer?.stop();
  });

  async function openEditor(url: string, name: string, username: string, password: string): Promise<WatchedPage> {
    const w = await watchedPage(browser, `multiplayer-${name}`);
    await w.page.goto(url);
    await w.page.waitForSelector('#node-dialog-login-username', { state: 'visible' });
    await w.page.fill('#node-dialog-login-username', username);
    await w.page.fill('#node-dialog-login-password', password);
    await w.page.click('#node-dialog-login-submit');
    await w.page.waitForSelector('#red-ui-workspace-chart', { state: 'visible' });
    return w;
  }

  const avatar = (w: WatchedPage, username: string) => w.page.waitForSelector(`#red-ui-multiplayer-user-list li.red-ui-multiplayer-user[data-username="${username}"]:not(.inactive)`);

  it('shows each user the others\' avatars, and takes a user away when their page closes', async () => {
    const admin = await openEditor(nodes[0]!.url, 'admin-node0', 'admin', ADMIN_PASSWORD);
    const reader = await openEditor(nodes[2]!.url, 'reader-node2', 'reader', READER_PASSWORD);
    const viaBalancer = await openEditor(balancer.url, 'reader-balancer', 'reader', READER_PASSWORD);
    await avatar(admin, 'reader');
    await avatar(reader, 'admin');
    await avatar(viaBalancer, 'admin');
    // The user's own sessions get no avatar: the reader's pages show only the admin.
    assert.deepEqual(await reader.page.$$eval('#red-ui-multiplayer-user-list li', (els) => els.map((e) => e.getAttribute('data-username'))), ['admin']);
    // The reader moves into the workspace: the admin's page shows them on that tab's tray.
    await reader.page.mouse.move(600, 400);
    await reader.page.mouse.move(620, 420);
    for (const w of [admin, reader, viaBalancer]) await w.shot('presence');
    await admin.page.waitForSelector('[id^="red-ui-multiplayer-user-location-PUB"]', { state: 'attached', timeout: 30_000 });
    await admin.shot('reader-located');

    // Both reader pages close: the admin's avatar for them goes inactive, as Node-RED's editor shows a user who left.
    await reader.page.context().close();
    await viaBalancer.page.context().close();
    await admin.page.waitForSelector('#red-ui-multiplayer-user-list li.red-ui-multiplayer-user[data-username="reader"].inactive', { timeout: 30_000 });
    await admin.shot('reader-left');
    assert.deepEqual(admin.errors.filter((e) => !e.includes('status of 401')), []);
  });
});
