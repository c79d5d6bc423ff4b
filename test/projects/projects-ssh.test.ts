import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { recordedCalls, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { filesHolding } from '../hardening/support.js';
import { deploy } from '../helpers/deploy.js';
import { startSshd, type SshServer } from '../helpers/sshd.js';
import { gitAs, seedRemote, inject, tab } from '../helpers/git-remote.js';

/** Projects against an SSH remote (Debian's sshd) with a key made through /settings/user/keys, host keys checked. */

describe('Projects: an SSH remote with a key from /settings/user/keys', () => {
  let scratch: string;
  let bare: string;
  let sshd: SshServer;
  let server: TestServer;
  let knownHosts: string;
  /** Every answer's text (answers), to check no passphrase or private key ever comes back. */
  const { call, answers } = recordedCalls(() => server);
  const sh = gitAs('CI', 'ci@example.test');
  const flowName = async () => ((await call('flows')).body as Array<{ id: string; name?: string }>).find((n) => n.id === 'n1')?.name;
  const sshTemps = async () => (await readdir(tmpdir())).filter((f) => f.startsWith('runnel-ssh-'));
  const failure = (res: { status: number; body: { code?: string }; text: string }) => `${res.status} ${res.text}\nsshd: ${sshd.log.join('')}`;

  before(async () => {
    scratch = await tempDir();
    bare = await seedRemote(scratch, [tab, inject('over ssh')], sh);
    const sshdDir = path.join(scratch, 'sshd');
    await mkdir(sshdDir);
    sshd = await startSshd(sshdDir);
    server = await startServer({ editorTheme: { projects: { enabled: true } }, logging: { level: 'trace' } });
    knownHosts = path.join(server.userDir, 'projects', '.sshkeys', 'known_hosts');
    await call('settings/user', { method: 'POST', json: { git: { user: { name: 'Ada', email: 'ada@example.test' } } } });
    const made = await call('settings/user/keys', { method: 'POST', json: { name: 'deploy', comment: 'ada@example.test' } });
    assert.equal(made.status, 200, made.text);
    await sshd.authorize((await call('settings/user/keys/deploy')).body.publickey);
  });
  after(async () => {
    await server?.dispose();
    await sshd?.close();
    await removeDir(scratch);
  });

  const origin = (extra: Record<string, unknown> = {}) => ({ url: sshd.url(bare), keyFile: 'deploy', passphrase: '', ...extra });

  it('refuses a clone from a host whose key is not known with git_host_key_verification_failed, leaving nothing behind', async () => {
    const before = await sshTemps();
    const res = await call('projects', { method: 'POST', json: { name: 'flows', git: { remotes: { origin: origin() } } } });
    assert.deepEqual([res.status, res.body.code], [400, 'git_host_key_verification_failed'], failure(res));
    assert.deepEqual((await call('projects')).body.projects, []);
    assert.deepEqual(await sshTemps(), before, 'the decrypted key is removed after the run');
  });

  it('refuses a host whose key changed with git_host_key_verification_failed', async () => {
    await writeFile(knownHosts, sshd.otherHostKeyLine);
    const res = await call('projects', { method: 'POST', json: { name: 'flows', git: { remotes: { origin: origin() } } } });
    assert.deepEqual([res.status, res.body.code], [400, 'git_host_key_verification_failed'], failure(res));
  });

  it('clones with the key once the host key is known, and deploys the project\'s flows', async () => {
    await writeFile(knownHosts, sshd.knownHostsLine);
    const before = await sshTemps();
    const res = await call('projects', { method: 'POST', json: { name: 'flows', credentialSecret: false, git: { remotes: { origin: origin() } } } });
    assert.equal(res.status, 200, failure(res));
    assert.equal((await call('projects')).body.active, 'flows');
    assert.equal(await flowName(), 'over ssh');
    assert.deepEqual(await sshTemps(), before);
    assert.match(sshd.log.join(''), /Accepted publickey for /);
  });

  it('pushes a commit to the SSH remote', async () => {
    await deploy(server, [tab, inject('pushed over ssh')]);
    await call('projects/flows/stage', { method: 'POST', json: { files: ['flows.json'] } });
    assert.equal((await call('projects/flows/commit', { method: 'POST', json: { message: 'From Runnel' } })).status, 200);
    const res = await call('projects/flows/push/origin/main', { method: 'POST' });
    assert.equal(res.status, 204, failure(res));
    assert.equal(sh(bare, 'log', '-1', '--format=%s', 'main').trim(), 'From Runnel');
  });

  it('fetches and pulls a commit pushed by someone else, and deploys it', async () => {
    const other = path.join(scratch, 'other');
    sh(scratch, 'clone', '-q', bare, other);
    await writeFile(path.join(other, 'flows.json'), JSON.stringify([tab, inject('pulled over ssh')], null, 4));
    sh(other, 'commit', '-q', '-am', 'From elsewhere');
    sh(other, 'push', '-q', 'origin', 'main');
    const branches = await call('projects/flows/branches/remote');
    assert.equal(branches.status, 200, failure(branches));
    assert.ok(branches.body.branches.some((b: { name: string }) => b.name === 'origin/main'), branches.text);
    const status = await call('projects/flows/branches/remote/origin/main/status');
    assert.deepEqual(status.body, { commits: { ahead: 0, behind: 1 } });
    const pulled = await call('projects/flows/pull/origin/main', { method: 'POST' });
    assert.equal(pulled.status, 204, failure(pulled));
    assert.equal(await flowName(), 'pulled over ssh');
  });

  it('uses a key Node-RED made in the user dir, as it is', async () => {
    const file = path.join(server.userDir, 'projects', '.sshkeys', '__default_from-node-red');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'node-red', '-f', file]);
    await sshd.authorize((await call('settings/user/keys/from-node-red')).body.publickey);
    assert.equal((await call('projects/flows/remotes/origin', { method: 'PUT', json: { auth: { keyFile: 'from-node-red', passphrase: '' } } })).status, 204);
    const fetched = await call('projects/flows/branches/remote');
    assert.equal(fetched.status, 200, failure(fetched));
    assert.match(sshd.log.join(''), /Accepted publickey for \S+ from 127\.0\.0\.1 port \d+ ssh2: ED25519/);
  });

  it('answers git_auth_failed for a key the server does not accept, and for a wrong passphrase', async () => {
    assert.equal((await call('settings/user/keys', { method: 'POST', json: { name: 'stranger' } })).status, 200);
    assert.equal((await call('projects/flows/remotes/origin', { method: 'PUT', json: { auth: { keyFile: 'stranger', passphrase: '' } } })).status, 204);
    const refused = await call('projects/flows/branches/remote');
    assert.deepEqual([refused.status, refused.body.code], [400, 'git_auth_failed'], failure(refused));

    assert.equal((await call('settings/user/keys', { method: 'POST', json: { name: 'locked', password: 'correct horse' } })).status, 200);
    await sshd.authorize((await call('settings/user/keys/locked')).body.publickey);
    await call('projects/flows/remotes/origin', { method: 'PUT', json: { auth: { keyFile: 'locked', passphrase: 'wrong horse' } } });
    const wrong = await call('projects/flows/branches/remote');
    assert.deepEqual([wrong.status, wrong.body.code], [400, 'git_auth_failed'], failure(wrong));
    assert.doesNotMatch(wrong.text, /horse/);
    await call('projects/flows/remotes/origin', { method: 'PUT', json: { auth: { keyFile: 'locked', passphrase: 'correct horse' } } });
    const fetched = await call('projects/flows/branches/remote');
    assert.equal(fetched.status, 200, failure(fetched));
  });

  it('answers not_found for a key the user does not have', async () => {
    await call('projects/flows/remotes/origin', { method: 'PUT', json: { auth: { keyFile: 'nobody-has-this', passphrase: '' } } });
    const res = await call('projects/flows/branches/remote');
    assert.deepEqual([res.status, res.body.code], [404, 'not_found'], failure(res));
  });

  it('keeps the passphrases and private keys out of the user dir, the log, the audit log and every answer', async () => {
    const secrets = ['correct horse', 'wrong horse', 'PRIVATE KEY'];
    // Node-RED's own key stays as Node-RED wrote it; every key Runnel made is encrypted.
    assert.deepEqual(await filesHolding(server.userDir, secrets), [`${path.join('projects', '.sshkeys', '__default_from-node-red')}: PRIVATE KEY`]);
    assert.ok(server.logs.some((l) => l.includes('"projects.remote.auth"')), 'the credential change is audited');
    assert.deepEqual(server.logs.filter((l) => secrets.some((s) => l.includes(s))), []);
    assert.deepEqual(answers.filter((text) => secrets.some((s) => text.includes(s))), []);
  });
});
