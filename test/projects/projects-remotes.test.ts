import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { inject, tab } from '../helpers/git-remote.js';

/** Projects against a real remote: a bare repository over file://, made and inspected with Debian's git. */

const GIT_USER = { git: { user: { name: 'Ada Tester', email: 'ada@example.test' } } };

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Other', '-c', 'user.email=other@example.test', ...args], { cwd, encoding: 'utf8' });
}

describe('Projects: remotes over file://', () => {
  let server: TestServer;
  let scratch: string;
  let bare: string;
  let url: string;
  const call = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);
  const flowName = async () => ((await call('flows')).body as Array<{ id: string; name?: string }>).find((n) => n.id === 'n1')?.name;

  before(async () => {
    scratch = await tempDir();
    bare = path.join(scratch, 'remote.git');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    url = pathToFileURL(bare).href;
    server = await startServer({ editorTheme: { projects: { enabled: true } } });
    await call('settings/user', { method: 'POST', json: GIT_USER });
    assert.equal((await call('projects', { method: 'POST', json: { name: 'one', files: { flow: 'flows.json' }, credentialSecret: 'shared-secret' } })).status, 200);
    await deploy(server, [tab, inject('from one')]);
    await call('projects/one/stage', { method: 'POST', json: { files: ['flows.json', 'flows_cred.json'] } });
    await call('projects/one/commit', { method: 'POST', json: { message: 'Flows from one' } });
  });
  after(async () => {
    await server.dispose();
    await removeDir(scratch);
  });

  it('adds a remote and pushes to it, tracking the branch', async () => {
    const added = await call('projects/one/remotes', { method: 'POST', json: { name: 'origin', url } });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual(added.body.remotes, [{ name: 'origin', fetch: url, push: url }]);
    const pushed = await call('projects/one/push/origin/main?u=true', { method: 'POST' });
    assert.equal(pushed.status, 204, pushed.text);
    assert.match(sh(bare, 'log', '--format=%s', 'main'), /^Flows from one\nCreate project\n$/);
    const status = await call('projects/one/status?remote=true');
    assert.equal(status.body.branches.remote, 'origin/main');
    assert.deepEqual([status.body.commits.ahead, status.body.commits.behind], [0, 0]);
    const remoteBranches = await call('projects/one/branches/remote');
    assert.deepEqual(remoteBranches.body.branches.map((b: { name: string }) => b.name), ['origin/main']);
  });

  it('clones the remote as a new project and deploys its flows', async () => {
    const cloned = await call('projects', { method: 'POST', json: { name: 'two', credentialSecret: 'shared-secret', git: { remotes: { origin: { url } } } } });
    assert.equal(cloned.status, 200, cloned.text);
    assert.equal(cloned.body.files.flow, 'flows.json');
    assert.deepEqual((await call('projects')).body, { projects: ['one', 'two'], active: 'two' });
    assert.equal(await flowName(), 'from one');
  });

  it('pulls what another project pushed and deploys it', async () => {
    await deploy(server, [tab, inject('from two')]);
    await call('projects/two/stage', { method: 'POST', json: { files: ['flows.json', 'flows_cred.json'] } });
    await call('projects/two/commit', { method: 'POST', json: { message: 'Flows from two' } });
    assert.equal((await call('projects/two/push', { method: 'POST' })).status, 204);

    await call('projects/one', { method: 'PUT', json: { active: true } });
    assert.equal(await flowName(), 'from one');
    const behind = await call('projects/one/status?remote=true');
    assert.equal(behind.body.commits.behind, 1);
    assert.deepEqual((await call('projects/one/branches/remote/origin/main/status')).body, { commits: { ahead: 0, behind: 1 } });
    const pulled = await call('projects/one/pull', { method: 'POST' });
    assert.equal(pulled.status, 204, pulled.text);
    assert.equal(await flowName(), 'from two');
  });

  it('refuses a push that is not a fast-forward with git_push_failed', async () => {
    const other = path.join(scratch, 'other');
    sh(scratch, 'clone', '-q', bare, other);
    await writeFile(path.join(other, 'NOTES.md'), 'elsewhere\n');
    sh(other, 'add', 'NOTES.md');
    sh(other, 'commit', '-q', '-m', 'Elsewhere');
    sh(other, 'push', '-q', 'origin', 'main');

    await call('projects/one', { method: 'PUT', json: { description: 'Local change' } });
    await call('projects/one/stage/README.md', { method: 'POST' });
    await call('projects/one/commit', { method: 'POST', json: { message: 'Local README' } });
    const refused = await call('projects/one/push', { method: 'POST' });
    assert.deepEqual([refused.status, refused.body.code], [400, 'git_push_failed']);
    assert.equal(sh(bare, 'log', '-1', '--format=%s', 'main').trim(), 'Elsewhere');
  });

  it('reports a merge conflict, shows both sides, and completes the merge after resolve and commit', async () => {
    const other = path.join(scratch, 'other');
    const flows = JSON.parse(await readFile(path.join(other, 'flows.json'), 'utf8')) as Array<{ id: string; name?: string }>;
    flows.find((n) => n.id === 'n1')!.name = 'theirs';
    sh(other, 'pull', '-q', '--no-rebase', 'origin', 'main');
    await writeFile(path.join(other, 'flows.json'), JSON.stringify(flows, null, 4));
    sh(other, 'commit', '-q', '-am', 'Theirs');
    sh(other, 'push', '-q', 'origin', 'main');
    await deploy(server, [tab, inject('ours')]);
    await call('projects/one/stage/flows.json', { method: 'POST' });
    await call('projects/one/commit', { method: 'POST', json: { message: 'Ours' } });

    const conflict = await call('projects/one/pull', { method: 'POST' });
    assert.deepEqual([conflict.status, conflict.body.code], [400, 'git_pull_merge_conflict'], conflict.text);
    assert.equal(await flowName(), 'ours', 'the running flows are untouched');
    const status = await call('projects/one/status');
    assert.equal(status.body.merging, true);
    assert.equal(status.body.files['flows.json'].status, 'UU');
    assert.match((await call('projects/one/files/:2/flows.json')).body.content, /"ours"/);
    const theirs = (await call('projects/one/files/:3/flows.json')).body.content as string;
    assert.match(theirs, /"theirs"/);
    // A deploy would overwrite the conflicted file (and with it their side) before it is resolved: Node-RED refuses it.
    const conflicted = await readFile(path.join(server.userDir, 'projects', 'one', 'flows.json'), 'utf8');
    const during = await call('flows', { method: 'POST', json: [tab, inject('deployed mid-merge')] });
    assert.deepEqual([during.status, during.body.code], [400, 'git_merge_conflict'], during.text);
    assert.equal(await readFile(path.join(server.userDir, 'projects', 'one', 'flows.json'), 'utf8'), conflicted);
    assert.equal(await flowName(), 'ours');

    const resolved = await call('projects/one/resolve/flows.json', { method: 'POST', json: { resolutions: theirs } });
    assert.equal(resolved.status, 204, resolved.text);
    const merged = await call('projects/one/commit', { method: 'POST', json: { message: 'Merge theirs' } });
    assert.equal(merged.status, 200, merged.text);
    assert.equal(merged.body.merging, undefined);
    assert.equal(await flowName(), 'theirs');
    assert.equal((await call('projects/one/push', { method: 'POST' })).status, 204);
  });

  it('answers Node-RED\'s codes for a remote that is not a repository and for bad remote names and URLs', async () => {
    const missing = await call('projects', { method: 'POST', json: { name: 'three', git: { remotes: { origin: { url: pathToFileURL(path.join(scratch, 'nothing')).href } } } } });
    assert.equal(missing.status, 400);
    assert.ok(['git_not_a_repository', 'git_repository_not_found'].includes(missing.body.code), missing.text);
    assert.deepEqual((await call('projects')).body.projects, ['one', 'two'], 'a failed clone leaves no project behind');
    for (const remote of [{ name: '-x', url }, { name: 'ok', url: '--upload-pack=touch /tmp/x' }, { name: 'ok', url: 'https://user:pw@example.test/r.git' }]) {
      const res = await call('projects/one/remotes', { method: 'POST', json: remote });
      assert.deepEqual([res.status, res.body.code], [400, 'git_invalid_argument'], JSON.stringify(remote));
    }
    const dup = await call('projects/one/remotes', { method: 'POST', json: { name: 'origin', url } });
    assert.deepEqual([dup.status, dup.body.code], [400, 'git_remote_already_exists']);
  });

  it('answers a 4xx with a code for bad branch names, commits, remote branches and resolutions', async () => {
    const bad: Array<[string, Parameters<typeof request>[1], number, string]> = [
      ['projects/one/branches', { method: 'POST', json: { name: '-x', create: true } }, 400, 'git_invalid_argument'],
      ['projects/one/branches', { method: 'POST', json: { name: 'a..b', create: true } }, 400, 'git_invalid_argument'],
      ['projects/one/branches', { method: 'POST', json: { name: 'no-such-branch' } }, 400, 'git_error'],
      ['projects/one/branches/-D', { method: 'DELETE' }, 400, 'git_invalid_argument'],
      ['projects/one/commits/--all', {}, 400, 'git_invalid_argument'],
      ['projects/one/commits?before=-x', {}, 400, 'git_invalid_argument'],
      ['projects/one/commits/0000000000000000000000000000000000000000', {}, 400, 'git_error'],
      ['projects/one/branches/remote/nowhere/main/status', {}, 400, 'git_error'],
      ['projects/one/branches/remote/origin/main', {}, 404, 'not_found'],
      ['projects/one/push/nowhere/main', { method: 'POST' }, 400, 'git_invalid_argument'],
      ['projects/one/push/origin/-f', { method: 'POST' }, 400, 'git_invalid_argument'],
      ['projects/one/pull/nowhere/main', { method: 'POST' }, 400, 'git_invalid_argument'],
      ['projects/one/resolve/flows.json', { method: 'POST', json: { resolutions: 42 } }, 400, 'invalid_request'],
      ['projects/one/resolve/flows.json', { method: 'POST', json: { resolutions: { 1: { selection: 'C' } } } }, 400, 'invalid_request'],
      ['projects/one/resolve/..%2Foutside', { method: 'POST', json: { resolutions: '' } }, 400, 'invalid_request'],
      ['projects/one/commit', { method: 'POST', json: { message: ' ' } }, 400, 'invalid_request'],
      ['projects/one/remotes/nowhere', { method: 'PUT', json: { auth: { username: 'u', password: 'p' } } }, 404, 'not_found'],
      ['projects/one/remotes/nowhere', { method: 'DELETE' }, 400, 'git_error'],
    ];
    for (const [p, init, status, code] of bad) {
      const res = await call(p, init);
      assert.deepEqual([res.status, res.body?.code], [status, code], `${init?.method ?? 'GET'} ${p}: ${res.text}`);
    }
    assert.deepEqual((await call('projects/one/branches')).body.branches.map((b: { name: string }) => b.name), ['main']);
  });

  it('reports an upstream that cannot be fetched in the status, with the local status still there', async () => {
    const moved = `${bare}.moved`;
    await rename(bare, moved);
    try {
      const status = await call('projects/one/status?remote=true');
      assert.equal(status.status, 200, status.text);
      assert.equal(status.body.branches.remoteError.remote, 'origin');
      assert.ok(['git_not_a_repository', 'git_repository_not_found'].includes(status.body.branches.remoteError.code), status.text);
      assert.equal(status.body.branches.local, 'main');
      assert.ok(status.body.commits.total > 0);
      const branches = await call('projects/one/branches/remote');
      assert.equal(branches.status, 400, branches.text);
    } finally {
      await rename(moved, bare);
    }
  });
});
