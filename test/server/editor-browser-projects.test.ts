import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { deploy, paletteTypes, storedFlows } from '../helpers/editor-page.js';

/** The editor's Projects in Chromium against Runnel: create from the welcome dialog, commit, diff, switch. */

const FLOW = [
  { id: 'tab1', type: 'tab', label: 'Project flow' },
  { id: 'inj1', type: 'comment', z: 'tab1', name: 'before', info: '', x: 160, y: 80, wires: [] },
];

describe('the editor in Chromium: Projects', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  const dialog = () => w.page.locator('.ui-dialog:visible');

  before(async () => {
    server = await startServer({ editorTheme: { projects: { enabled: true }, tours: false, palette: { catalogues: [] } } });
    assert.equal((await request(server.at('flows'), { method: 'POST', json: FLOW })).status, 204);
    browser = await launchBrowser();
    w = await watchedPage(browser, 'projects');
    await w.page.goto(server.url);
    await paletteTypes(w.page);
  });
  after(async () => {
    await browser?.close();
    await server.dispose();
  });

  it('creates a project from the welcome dialog, taking the running flows along', async () => {
    const { page } = w;
    await page.click('.red-ui-projects-dialog-screen-create-type[data-type="empty"]');
    const [name, email] = [dialog().locator('input[type="text"]').nth(0), dialog().locator('input[type="text"]').nth(1)];
    await name.fill('Ada Tester');
    await email.fill('ada@example.test');
    await email.press('End');
    await w.shot('01-git-user');
    await page.click('#red-ui-projects-dialog-git-config');
    await page.fill('#red-ui-projects-dialog-screen-create-project-name', 'demo');
    await page.press('#red-ui-projects-dialog-screen-create-project-name', 'End');
    await page.click('#red-ui-projects-dialog-create-name:not(.disabled)');
    await page.click('#red-ui-projects-dialog-create-default-files');
    const secret = dialog().locator('input[type="password"]');
    await secret.fill('demo-secret');
    await secret.press('End');
    await w.shot('02-encryption');
    await page.click('#red-ui-projects-dialog-create-encryption:not(.disabled)');
    await dialog().getByText('You have successfully created your first project').waitFor();
    await w.shot('03-created');
    await dialog().getByRole('button', { name: 'Done' }).click();
    assert.deepEqual((await request(server.at('projects'))).body, { projects: ['demo'], active: 'demo' });
    assert.equal((await storedFlows(server)).find((n) => n.id === 'inj1')?.name, 'before');
    await page.click('#red-ui-tab-tab1');
    await page.waitForSelector('#inj1');
  });

  it('commits a deployed change from the version control sidebar and shows its diff', async () => {
    const { page } = w;
    await page.evaluate(() => {
      const RED = (globalThis as any).RED;
      const node = RED.nodes.node('inj1');
      node.name = 'after';
      node.changed = true;
      node.dirty = true;
      RED.nodes.dirty(true);
      RED.view.redraw(true);
    });
    await deploy(page);
    await w.shot('04a-deployed');
    await eventually(async () => (await storedFlows(server)).find((n) => n.id === 'inj1')?.name === 'after');
    await page.evaluate(() => (globalThis as any).RED.sidebar.show('version-control'));
    const sidebar = page.locator('.red-ui-sidebar-vc');
    await sidebar.getByText('flows.json').first().waitFor();
    assert.equal(await sidebar.getByText('.node-red.bak').count(), 0, 'no copy of the credentials file is left in the project');
    await w.shot('04-local-changes');
    await sidebar.locator('button:visible', { hasText: /^\s*all$/ }).first().click();
    await eventually(async () => (await request(server.at('projects/demo/status'))).body.files['flows.json']?.status === 'M ');
    await sidebar.locator('button:visible', { hasText: /^commit$/ }).click();
    await sidebar.locator('textarea:visible').fill('Rename the inject');
    // The editor enables Commit on keyup.
    await sidebar.locator('textarea:visible').press('End');
    await w.shot('05-commit-message');
    await sidebar.locator('button:visible', { hasText: /^Commit$/ }).click();
    await eventually(async () => (await request(server.at('projects/demo/commits'))).body.commits[0]?.subject === 'Rename the inject');
    await sidebar.getByText('Commit History').click();
    await sidebar.locator('.red-ui-sidebar-vc-commit-subject:visible', { hasText: 'Rename the inject' }).click();
    // The commit's diff: the flows file, node by node, with the renamed comment.
    const diff = page.locator('.red-ui-tray-body .red-ui-diff-text');
    await diff.locator('.red-ui-diff-text-commit-header').waitFor();
    await diff.getByText('Rename the inject').first().waitFor();
    await diff.getByText('flows.json').first().waitFor();
    // The node-by-node diff of the flows file, drawn once both versions of it are read: the tab
    // with one changed node, and, opened, the comment with its old and new name.
    const flowRow = diff.locator('.red-ui-diff-list-flow-title', { hasText: 'Project flow' });
    await flowRow.locator('.red-ui-diff-status-changed', { hasText: '1' }).waitFor();
    await flowRow.click();
    const changed = diff.locator('.red-ui-diff-list-node-description', { hasText: /before|after/ }).first();
    await changed.waitFor();
    await changed.click();
    await diff.getByText('before').first().waitFor();
    await diff.getByText('after').first().waitFor();
    await w.shot('06-commit-diff');
    await page.locator('.red-ui-tray-footer button:visible, .red-ui-tray-toolbar button:visible', { hasText: 'Close' }).first().click();
    await diff.waitFor({ state: 'detached' });
  });

  it('opens another project through the open project dialog, and the server deploys its flows', async () => {
    const { page } = w;
    const other = await request(server.at('projects'), { method: 'POST', json: { name: 'other', files: { flow: 'flows.json' }, credentialSecret: false } });
    assert.equal(other.status, 200, other.text);
    await page.locator('.red-ui-notification:has-text("other")').first().waitFor().catch(() => undefined);
    await request(server.at('projects/demo'), { method: 'PUT', json: { active: true } });
    await page.waitForSelector('#red-ui-tab-tab1');
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:open-project'));
    await dialog().locator('.red-ui-projects-dialog-project-list-entry-name:text-is("other")').click();
    await w.shot('07-open-project');
    await page.click('#red-ui-projects-dialog-create');
    await eventually(async () => (await request(server.at('projects'))).body.active === 'other');
    // The editor has the other project once it has loaded its flows and hidden its "Loading project" bar.
    await page.waitForFunction(() => (globalThis as any).RED.projects.getActiveProject()?.name === 'other'
      && !(globalThis as any).$('#red-ui-loading-progress').is(':visible'));
    await page.waitForSelector('#red-ui-tab-tab1', { state: 'detached' });
    await page.locator('.red-ui-sidebar-vc-commit-subject:visible', { hasText: 'Create project' }).waitFor();
    assert.equal(await page.locator('.red-ui-sidebar-vc-commit-subject:visible', { hasText: 'Rename the inject' }).count(), 0);
    await w.shot('08-switched');
    assert.deepEqual(await storedFlows(server), []);
    // Nothing the editor asked for failed, GET /settings/user/keys of the git settings included.
    assert.deepEqual(w.requests.filter((r) => / [45]\d\d$/.test(r)), []);
  });
});
