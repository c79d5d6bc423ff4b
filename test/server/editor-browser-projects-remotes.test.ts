import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { eventually, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { launchBrowser, watchedPage, type WatchedPage } from '../helpers/browser.js';
import { deploy, paletteTypes, storedFlows } from '../helpers/editor-page.js';
import { startGitHttp, type GitHttpServer } from '../helpers/git-http.js';
import { startSshd, type SshServer } from '../helpers/sshd.js';
import { gitAs, seedRemote } from '../helpers/git-remote.js';

/**
 * The editor's Projects against real remotes in Chromium: clone over HTTPS (user name and token)
 * from the welcome dialog, commit and push from the history sidebar, pull a conflicting change and
 * resolve it in the editor's conflict view, clone over SSH with a key from /settings/user/keys.
 */

const TOKEN = 'tok-browser-5d2c81';
const tab = { id: 't1', type: 'tab', label: 'Remote flow' };
const comment = (name: string) => ({ id: 'n1', type: 'comment', z: 't1', name, info: '', x: 200, y: 100, wires: [] });

describe('the editor in Chromium: Projects with HTTPS and SSH remotes', { timeout: 900_000 }, () => {
  let scratch: string;
  let bare: string;
  let git: GitHttpServer;
  let sshd: SshServer;
  let server: TestServer;
  let browser: Browser;
  let w: WatchedPage;
  let caBefore: string | undefined;
  const dialog = () => w.page.locator('.ui-dialog:visible');
  const sidebar = () => w.page.locator('.red-ui-sidebar-vc');
  const sh = gitAs('Bob', 'bob@example.test');
  const nodeName = async () => (await storedFlows(server)).find((n) => n.id === 'n1')?.name;

  /** Waits until the editor has the project open: its flows loaded and the "Loading project" bar gone. */
  const opened = (name: string) => w.page.waitForFunction((n) => (globalThis as any).RED.projects.getActiveProject()?.name === n
    && !(globalThis as any).$('#red-ui-loading-progress').is(':visible'), name);

  /** Renames the comment in the editor and deploys, as a user editing the node would. */
  const renameAndDeploy = async (name: string) => {
    await w.page.evaluate((n) => {
      const RED = (globalThis as any).RED;
      const node = RED.nodes.node('n1');
      node.name = n;
      node.changed = true;
      node.dirty = true;
      RED.nodes.dirty(true);
      RED.view.redraw(true);
    }, name);
    await deploy(w.page);
    await eventually(async () => (await nodeName()) === name);
  };

  /** Expands a section of the history sidebar unless `inside` already shows (a header click toggles it). */
  const openSection = async (title: string, inside: ReturnType<WatchedPage['page']['locator']>) => {
    if (!(await inside.isVisible())) await sidebar().locator('.red-ui-sidebar-vc-slide-box-header, .red-ui-palette-header', { hasText: title }).first().click();
  };
  /** The remote box of the commit history: push and pull. */
  const remoteBox = async () => {
    await openSection('Commit History', w.page.locator('#red-ui-sidebar-vc-repo-status-button'));
    // The button toggles the box (and the editor closes it itself after a push).
    if (!(await w.page.locator('#red-ui-sidebar-vc-repo-status-button.selected').isVisible())) await w.page.click('#red-ui-sidebar-vc-repo-status-button');
  };

  /** Stages everything and commits from the history sidebar. */
  const commitAll = async (project: string, message: string) => {
    await w.page.evaluate(() => (globalThis as any).RED.sidebar.show('version-control'));
    await openSection('Local Changes', sidebar().locator('button:visible', { hasText: /^\s*all$/ }).first());
    await sidebar().locator('.red-ui-sidebar-vc-change-entry:visible', { hasText: 'flows.json' }).first().waitFor();
    await sidebar().locator('button:visible', { hasText: /^\s*all$/ }).first().click();
    await eventually(async () => (await request(server.at(`projects/${project}/status`))).body.files['flows.json']?.status === 'M ');
    await sidebar().locator('button:visible', { hasText: /^commit$/ }).click();
    await sidebar().locator('textarea:visible').fill(message);
    await sidebar().locator('textarea:visible').press('End');
    await sidebar().locator('button:visible', { hasText: /^Commit$/ }).click();
    await eventually(async () => (await request(server.at(`projects/${project}/commits`))).body.commits[0]?.subject === message);
  };

  before(async () => {
    scratch = await tempDir();
    bare = await seedRemote(scratch, [tab, comment('from the remote')], sh, 'remote-flows');
    git = await startGitHttp(path.join(scratch, 'repos'), 'ci', TOKEN);
    caBefore = process.env.GIT_SSL_CAINFO;
    process.env.GIT_SSL_CAINFO = git.caFile;
    await mkdir(path.join(scratch, 'sshd'));
    sshd = await startSshd(path.join(scratch, 'sshd'));
    server = await startServer({ editorTheme: { projects: { enabled: true }, tours: false, palette: { catalogues: [] } } });
    // The SSH remote's host key, as an administrator would record it after checking its fingerprint.
    await mkdir(path.join(server.userDir, 'projects', '.sshkeys'), { recursive: true });
    await writeFile(path.join(server.userDir, 'projects', '.sshkeys', 'known_hosts'), sshd.knownHostsLine);
    browser = await launchBrowser();
    w = await watchedPage(browser, 'projects-remotes');
    await w.page.goto(server.url);
    await paletteTypes(w.page);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    await git?.close();
    await sshd?.close();
    if (caBefore === undefined) delete process.env.GIT_SSL_CAINFO;
    else process.env.GIT_SSL_CAINFO = caBefore;
    await removeDir(scratch);
  });

  it('clones over HTTPS with a user name and token from the welcome dialog, and opens the project', async () => {
    const { page } = w;
    await page.click('.red-ui-projects-dialog-screen-create-type[data-type="clone"]');
    await dialog().locator('input[type="text"]').nth(0).fill('Ada Tester');
    await dialog().locator('input[type="text"]').nth(1).fill('ada@example.test');
    await dialog().locator('input[type="text"]').nth(1).press('End');
    await page.click('#red-ui-projects-dialog-git-config');
    await page.fill('#red-ui-projects-dialog-screen-create-project-name', 'over-https');
    await page.press('#red-ui-projects-dialog-screen-create-project-name', 'End');
    await page.fill('#red-ui-projects-dialog-screen-create-project-repo', `${git.url}flows.git`);
    await page.press('#red-ui-projects-dialog-screen-create-project-repo', 'End');
    await page.fill('#red-ui-projects-dialog-screen-create-project-repo-user', 'ci');
    // The password is one of the editor's credential inputs (a typedInput over a hidden input).
    await page.evaluate((token) => (globalThis as any).$('#red-ui-projects-dialog-screen-create-project-repo-pass').typedInput('value', token), TOKEN);
    await w.shot('01-clone-https');
    await page.click('#red-ui-projects-dialog-clone-project:not(.disabled)');
    await opened('over-https');
    await page.click('#red-ui-tab-t1');
    await page.locator('#n1').waitFor();
    await page.locator('.red-ui-flow-node-label-text', { hasText: 'from the remote' }).waitFor();
    await w.shot('02-cloned-https');
    assert.equal(await nodeName(), 'from the remote');
  });

  it('commits a change and pushes it to the HTTPS remote from the history sidebar', async () => {
    const { page } = w;
    await renameAndDeploy('changed in the editor');
    await commitAll('over-https', 'Change from the editor');
    await remoteBox();
    await page.locator('#red-ui-sidebar-vc-repo-push:not([disabled])').click();
    await eventually(() => sh(bare, 'log', '-1', '--format=%s', 'main').trim() === 'Change from the editor', 90_000, 200);
    // Pushed: the spinner gone and nothing ahead; the remote box closed again shows the history.
    await page.waitForFunction(() => (globalThis as any).$('.red-ui-sidebar-vc .red-ui-component-spinner:visible').length === 0);
    await page.locator('#red-ui-sidebar-vc-commits-ahead', { hasText: '0' }).waitFor();
    if (await page.locator('#red-ui-sidebar-vc-repo-status-button.selected').isVisible()) await page.click('#red-ui-sidebar-vc-repo-status-button');
    await sidebar().locator('.red-ui-sidebar-vc-commit-subject:visible', { hasText: 'Change from the editor' }).waitFor();
    await w.shot('03-pushed');
  });

  it('pulls a conflicting change, resolves the conflict in the editor and deploys the merge', async () => {
    const { page } = w;
    const other = path.join(scratch, 'other');
    sh(scratch, 'clone', '-q', bare, other);
    await writeFile(path.join(other, 'flows.json'), JSON.stringify([tab, comment('their name')], null, 4));
    sh(other, 'commit', '-q', '-am', 'Their change');
    sh(other, 'push', '-q', 'origin', 'main');
    await renameAndDeploy('our name');
    await commitAll('over-https', 'Our change');
    // The history's refresh button fetches: the sidebar then counts one commit ahead, one behind.
    await openSection('Commit History', w.page.locator('#red-ui-sidebar-vc-repo-status-button'));
    // A click while the sidebar still refreshes after the commit is ignored by the editor: click until it counts.
    const refresh = sidebar().locator('.red-ui-palette-header', { hasText: 'Commit History' }).locator('button');
    await eventually(async () => {
      await refresh.click();
      return (await page.locator('#red-ui-sidebar-vc-commits-behind').textContent()) === '1';
    }, 60_000, 1000);
    await remoteBox();
    await page.locator('#red-ui-sidebar-vc-repo-pull:not([disabled])').click();
    // The merge stops on the conflict: the running flows stay ours, the sidebar lists the unmerged file.
    await eventually(async () => (await request(server.at('projects/over-https/status'))).body.merging === true);
    const unmerged = sidebar().locator('.red-ui-sidebar-vc-change-entry:visible', { hasText: 'flows.json' }).first();
    await openSection('Local Changes', unmerged);
    await unmerged.waitFor();
    assert.equal(await nodeName(), 'our name');
    await w.shot('04-conflict');
    await unmerged.locator('a').first().click();
    const tray = page.locator('.red-ui-tray-body');
    await tray.locator('.red-ui-diff-text-file-header').first().waitFor();
    await w.shot('05a-conflict-tray');
    const flowRow = tray.locator('.red-ui-diff-list-flow-title', { hasText: 'Remote flow' });
    await flowRow.locator('.red-ui-diff-status-conflict').first().waitFor();
    await flowRow.click();
    await tray.locator('.red-ui-diff-list-node-conflict').first().waitFor();
    await w.shot('05-conflict-view');
    // The editor styles its radio buttons: the hidden input takes the click, as its label passes it on.
    await page.evaluate(() => (globalThis as any).document.getElementById('red-ui-diff-selectbox-n1-remote').click());
    await page.locator('#red-ui-diff-view-resolve-diff:not(.disabled)').click();
    await eventually(async () => (await request(server.at('projects/over-https/status'))).body.files['flows.json']?.status === 'M ');
    await sidebar().locator('button:visible', { hasText: /^commit$/ }).click();
    await sidebar().locator('textarea:visible').fill('Merge their change, keeping their name');
    await sidebar().locator('textarea:visible').press('End');
    await sidebar().locator('button:visible', { hasText: /^Commit$/ }).click();
    await eventually(async () => (await request(server.at('projects/over-https/status'))).body.merging === undefined);
    await eventually(async () => (await nodeName()) === 'their name');
    await page.locator('.red-ui-flow-node-label-text', { hasText: 'their name' }).waitFor();
    await w.shot('06-resolved');
  });

  it('clones over SSH with a key from the user settings, checking the host key, and opens the project', async () => {
    const { page } = w;
    const made = await request(server.at('settings/user/keys'), { method: 'POST', json: { name: 'deploy', comment: 'ada@example.test' } });
    assert.equal(made.status, 200, made.text);
    await sshd.authorize((await request(server.at('settings/user/keys/deploy'))).body.publickey);
    await page.evaluate(() => (globalThis as any).RED.actions.invoke('core:new-project'));
    await dialog().locator('.red-ui-projects-dialog-screen-create-type[data-type="clone"]').click();
    await page.fill('#red-ui-projects-dialog-screen-create-project-name', 'over-ssh');
    await page.press('#red-ui-projects-dialog-screen-create-project-name', 'End');
    await page.fill('#red-ui-projects-dialog-screen-create-project-repo', sshd.url(bare));
    await page.press('#red-ui-projects-dialog-screen-create-project-repo', 'End');
    await dialog().locator('select:visible option', { hasText: 'deploy' }).waitFor({ state: 'attached' });
    await w.shot('07-clone-ssh');
    await page.click('#red-ui-projects-dialog-create:not(.disabled)');
    await opened('over-ssh');
    await page.click('#red-ui-tab-t1');
    await page.locator('.red-ui-flow-node-label-text', { hasText: 'their name' }).waitFor();
    await w.shot('08-cloned-ssh');
    assert.deepEqual((await request(server.at('projects'))).body, { projects: ['over-https', 'over-ssh'], active: 'over-ssh' });
    assert.match(sshd.log.join(''), /Accepted publickey for /);
    assert.deepEqual(w.requests.filter((r) => / 5\d\d$/.test(r)), []);
  });
});
