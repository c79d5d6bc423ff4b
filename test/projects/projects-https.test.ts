import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { recordedCalls, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { startGitHttp, type GitHttpServer } from '../helpers/git-http.js';
import { gitAs, seedRemote } from '../helpers/git-remote.js';
import { filesHolding } from '../hardening/support.js';

/** Projects against an HTTPS remote that wants a user name and token: git-http-backend behind node's https. */

const TOKEN = 'tok-7c1d9e0b4a2f4e61';
const tab = { id: 't1', type: 'tab', label: 'Flow 1' };

describe('Projects: an HTTPS remote with a user name and token', () => {
  let scratch: string;
  let git: GitHttpServer;
  let server: TestServer;
  let caBefore: string | undefined;
  /** Every answer's text (answers), to check no credential ever comes back. */
  const { call, answers } = recordedCalls(() => server);
  const sh = gitAs('CI', 'ci@example.test');

  before(async () => {
    scratch = await tempDir();
    await seedRemote(scratch, [tab, { id: 'n1', type: 'inject', z: 't1', name: 'from the server', wires: [] }], sh);
    git = await startGitHttp(path.join(scratch, 'repos'), 'ci', TOKEN);
    // Git trusts the test CA through its environment, which Runnel's git inherits.
    caBefore = process.env.GIT_SSL_CAINFO;
    process.env.GIT_SSL_CAINFO = git.caFile;
    // Everything logged, the audit log included, to check the credentials are never in it.
    server = await startServer({ editorTheme: { projects: { enabled: true } }, logging: { level: 'trace' } });
    await call('settings/user', { method: 'POST', json: { git: { user: { name: 'Ada', email: 'ada@example.test' } } } });
  });
  after(async () => {
    await server.dispose();
    await git.close();
    if (caBefore === undefined) delete process.env.GIT_SSL_CAINFO;
    else process.env.GIT_SSL_CAINFO = caBefore;
    await removeDir(scratch);
  });

  it('refuses a clone without the token with git_auth_failed and leaves nothing behind', async () => {
    const res = await call('projects', { method: 'POST', json: { name: 'nope', git: { remotes: { origin: { url: `${git.url}flows.git` } } } } });
    assert.deepEqual([res.status, res.body.code], [400, 'git_auth_failed'], res.text);
    const wrong = await call('projects', { method: 'POST', json: { name: 'nope', git: { remotes: { origin: { url: `${git.url}flows.git`, username: 'ci', password: 'not-the-token' } } } } });
    assert.deepEqual([wrong.status, wrong.body.code], [400, 'git_auth_failed'], wrong.text);
    assert.deepEqual((await call('projects')).body.projects, []);
  });

  it('clones with the user name and token, deploys, commits and pushes back', async () => {
    const cloned = await call('projects', { method: 'POST', json: { name: 'remote', credentialSecret: false, git: { remotes: { origin: { url: `${git.url}flows.git`, username: 'ci', password: TOKEN } } } } });
    assert.equal(cloned.status, 200, cloned.text);
    assert.equal(((await call('flows')).body as Array<{ id: string; name?: string }>).find((n) => n.id === 'n1')?.name, 'from the server');
    await deploy(server, [tab, { id: 'n1', type: 'inject', z: 't1', name: 'changed here', wires: [] }]);
    await call('projects/remote/stage', { method: 'POST', json: { files: ['flows.json'] } });
    await call('projects/remote/commit', { method: 'POST', json: { message: 'Changed here' } });
    const pushed = await call('projects/remote/push', { method: 'POST' });
    assert.equal(pushed.status, 204, pushed.text);
    assert.equal(sh(path.join(scratch, 'repos', 'flows.git'), 'log', '-1', '--format=%s', 'main').trim(), 'Changed here');
  });

  it('answers git_auth_failed after the token is replaced by a wrong one, without the token in the answer', async () => {
    assert.equal((await call('projects/remote/remotes/origin', { method: 'PUT', json: { auth: { username: 'ci', password: 'revoked' } } })).status, 204);
    const refused = await call('projects/remote/pull', { method: 'POST' });
    assert.deepEqual([refused.status, refused.body.code], [400, 'git_auth_failed'], refused.text);
    assert.ok(!refused.text.includes('revoked'));
  });

  it('keeps the token and passwords out of the user dir, the working copy\'s git config, the log, the audit log and every answer', async () => {
    const basic = Buffer.from(`ci:${TOKEN}`).toString('base64');
    assert.ok(git.seen.includes(`Basic ${basic}`), 'git sent the token');
    for (const p of ['projects/remote', 'projects/remote/remotes', 'projects/remote/status?remote=true', 'projects/remote/branches/remote']) await call(p);
    const secrets = [TOKEN, basic, 'not-the-token', 'revoked', Buffer.from('ci:revoked').toString('base64')];
    assert.deepEqual(await filesHolding(server.userDir, secrets), []);
    const audit = server.logs.filter((l) => l.includes('"projects.'));
    assert.ok(['projects.clone', 'projects.push', 'projects.remote.auth'].every((e) => audit.some((l) => l.includes(e))), `audited: ${audit.join('')}`);
    assert.deepEqual(server.logs.filter((l) => secrets.some((s) => l.includes(s))), []);
    assert.deepEqual(answers.filter((text) => secrets.some((s) => text.includes(s))), []);
  });
});
