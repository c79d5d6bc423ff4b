import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { gitAs, seedRemote, inject, tab } from '../helpers/git-remote.js';

/** Working copies in trouble: a damaged .git, requests that reach git at the same moment, a clone too large. */

const GIT_USER = { git: { user: { name: 'Ada Tester', email: 'ada@example.test' } } };

describe('Projects: a project whose .git is damaged, in a user dir that is itself a git repository', () => {
  let server: TestServer;
  let userDir: string;
  const call = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);
  const userDirCommits = () => execFileSync('git', ['rev-list', '--count', '--all'], { cwd: userDir, encoding: 'utf8' }).trim();

  before(async () => {
    userDir = await tempDir();
    // Users keep ~/.node-red in git: a project's git must never fall through to that repository.
    execFileSync('git', ['init', '-q', '-b', 'main', userDir]);
    server = await startServer({ editorTheme: { projects: { enabled: true } } }, userDir);
    await call('settings/user', { method: 'POST', json: GIT_USER });
    assert.equal((await call('projects', { method: 'POST', json: { name: 'broken', files: { flow: 'flows.json' }, credentialSecret: false } })).status, 200);
    await deploy(server, [tab, inject('committed')]);
    await call('projects/broken/stage', { method: 'POST', json: { files: ['flows.json'] } });
    assert.equal((await call('projects/broken/commit', { method: 'POST', json: { message: 'Committed' } })).status, 200);
    await rm(path.join(userDir, 'projects', 'broken', '.git', 'HEAD'));
  });
  after(async () => {
    await server.dispose();
    await removeDir(userDir);
  });

  it('answers git_not_a_repository for status, stage and commit, and never touches the user dir\'s repository', async () => {
    await deploy(server, [tab, inject('deployed after the damage')]);
    for (const [p, init] of [
      ['projects/broken/status', {}],
      ['projects/broken/stage', { method: 'POST', json: { files: ['flows.json'] } }],
      ['projects/broken/commit', { method: 'POST', json: { message: 'Into which repository?' } }],
    ] as const) {
      const res = await call(p, init);
      assert.deepEqual([res.status, res.body.code], [400, 'git_not_a_repository'], `${p}: ${res.text}`);
    }
    assert.equal(userDirCommits(), '0', 'nothing was committed to the user dir\'s repository');
  });

  it('keeps the deployed flows: they run and are on disk', async () => {
    const flows = JSON.parse(await readFile(path.join(userDir, 'projects', 'broken', 'flows.json'), 'utf8')) as Array<{ id: string; name?: string }>;
    assert.equal(flows.find((n) => n.id === 'n1')?.name, 'deployed after the damage');
    assert.equal(((await call('flows')).body as Array<{ id: string; name?: string }>).find((n) => n.id === 'n1')?.name, 'deployed after the damage');
  });
});

describe('Projects: requests that reach git at the same moment', () => {
  let server: TestServer;
  const call = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);

  before(async () => {
    server = await startServer({ editorTheme: { projects: { enabled: true } } });
    await call('settings/user', { method: 'POST', json: GIT_USER });
    assert.equal((await call('projects', { method: 'POST', json: { name: 'busy', files: { flow: 'flows.json' }, credentialSecret: false } })).status, 200);
  });
  after(() => server.dispose());

  it('takes two commits sent at once while editors poll the status, with no lock error and one commit per change', async () => {
    const rounds = 8;
    for (let round = 0; round < rounds; round++) {
      await deploy(server, [tab, inject(`round ${round}`)]);
      assert.equal((await call('projects/busy/stage', { method: 'POST', json: { files: ['flows.json'] } })).status, 200);
      const answers = await Promise.all([
        call('projects/busy/commit', { method: 'POST', json: { message: `Round ${round}, first` } }),
        ...Array.from({ length: 6 }, () => call('projects/busy/status')),
        call('projects/busy/commit', { method: 'POST', json: { message: `Round ${round}, second` } }),
      ]);
      for (const res of answers) assert.equal(res.status, 200, res.text);
    }
    assert.equal((await call('projects/busy/commits')).body.total, 1 + rounds);
  });
});

describe('Projects: a clone of a repository larger than editorTheme.projects.maxCloneSize', () => {
  let server: TestServer;
  let scratch: string;
  const call = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);

  before(async () => {
    scratch = await tempDir();
    const bare = await seedRemote(scratch, [tab, inject('small flows')]);
    // 3 MB that do not compress, against a 1 MB bound.
    const work = path.join(scratch, 'work');
    await writeFile(path.join(work, 'blob.bin'), randomBytes(3 * 1024 * 1024));
    const ci = gitAs('CI', 'ci@example.test');
    ci(work, 'add', 'blob.bin');
    ci(work, 'commit', '-q', '-m', 'A large file');
    ci(work, 'push', '-q', bare, 'main');
    server = await startServer({ editorTheme: { projects: { enabled: true, maxCloneSize: 1024 * 1024 } } });
  });
  after(async () => {
    await server.dispose();
    await removeDir(scratch);
  });

  it('answers git_clone_too_large and leaves no project and no files behind', async () => {
    const url = pathToFileURL(path.join(scratch, 'repos', 'flows.git')).href;
    const res = await call('projects', { method: 'POST', json: { name: 'huge', credentialSecret: false, git: { remotes: { origin: { url } } } } });
    assert.deepEqual([res.status, res.body.code], [400, 'git_clone_too_large'], res.text);
    assert.deepEqual((await call('projects')).body, { projects: [] });
    assert.deepEqual((await readdir(path.join(server.userDir, 'projects'))).filter((f) => !f.startsWith('.')), []);
  });
});
