import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { adminAuth, eventually, login, READER_PASSWORD, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

/** Node-RED's Projects through the real HTTP API, on Debian's git, in a temp user dir. */

const PROJECTS_ON = { editorTheme: { projects: { enabled: true } } };
const GIT_USER = { git: { user: { name: 'Ada Tester', email: 'ada@example.test' } } };

function api(server: TestServer, token?: string) {
  return (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), { ...init, ...(token ? { token } : {}) });
}

const inject = (id: string, name: string) => ({ id, type: 'inject', z: 't1', name, wires: [] });
const tab = { id: 't1', type: 'tab', label: 'Flow 1' };

describe('Projects: the lifecycle of a project and its working copy', () => {
  let server: TestServer;
  let call: ReturnType<typeof api>;

  before(async () => {
    server = await startServer(PROJECTS_ON);
    call = api(server);
    assert.equal((await call('settings/user', { method: 'POST', json: GIT_USER })).status, 204);
  });
  after(() => server.dispose());

  it('creates an empty project in projects/<name>/ as Node-RED lays it out, opens it and deploys into its flow file', async () => {
    assert.deepEqual((await call('projects')).body, { projects: [] });
    const created = await call('projects', { method: 'POST', json: { name: 'alpha', summary: 'First', files: { flow: 'flows.json' }, credentialSecret: 'alpha-secret' } });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.name, 'alpha');
    assert.equal(created.body.summary, 'First');
    assert.deepEqual(created.body.files, { package: 'package.json', flow: 'flows.json', credentials: 'flows_cred.json' });
    assert.equal(created.body.settings.credentialsEncrypted, true);
    assert.equal(created.body.git.branches.local, 'main');
    assert.deepEqual((await call('projects')).body, { projects: ['alpha'], active: 'alpha' });

    const dir = path.join(server.userDir, 'projects', 'alpha');
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    assert.deepEqual(pkg['node-red'].settings, { flowFile: 'flows.json', credentialsFile: 'flows_cred.json' });
    const config = JSON.parse(await readFile(path.join(server.userDir, '.config.projects.json'), 'utf8'));
    assert.equal(config.activeProject, 'alpha');
    assert.equal(config.projects.alpha.credentialSecret, 'alpha-secret');

    await deploy(server, [tab, inject('n1', 'first')]);
    const onDisk = JSON.parse(await readFile(path.join(dir, 'flows.json'), 'utf8'));
    assert.equal(onDisk.find((n: { id: string }) => n.id === 'n1').name, 'first');
  });

  it('shows the changed flow file in status, diffs it, stages, commits and lists the commit', async () => {
    const status = await call('projects/alpha/status');
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.files['flows.json'].status, ' M');
    assert.equal(status.body.commits.total, 1);

    const tree = await call('projects/alpha/diff/tree/flows.json');
    assert.match(tree.body.diff, /\+.*"name": ?"first"/);
    const staged = await call('projects/alpha/stage/flows.json', { method: 'POST' });
    assert.equal(staged.body.files['flows.json'].status, 'M ');
    assert.match((await call('projects/alpha/diff/index/flows.json')).body.diff, /"first"/);
    const committed = await call('projects/alpha/commit', { method: 'POST', json: { message: 'Add the first inject' } });
    assert.equal(committed.status, 200, committed.text);
    assert.equal(committed.body.commits.total, 2);

    const commits = await call('projects/alpha/commits');
    assert.equal(commits.body.total, 2);
    assert.equal(commits.body.commits[0].subject, 'Add the first inject');
    assert.equal(commits.body.commits[0].author, 'Ada Tester');
    const sha = commits.body.commits[0].sha as string;
    const shown = await call(`projects/alpha/commits/${sha}`);
    assert.match(shown.body.commit, /Add the first inject/);
    assert.match((await call(`projects/alpha/files/${sha}/flows.json`)).body.content, /"first"/);
    assert.match((await call('projects/alpha/files/_/README.md')).body.content, /^alpha\n=====/);
    assert.ok('package.json' in (await call('projects/alpha/files')).body);
  });

  it('creates, lists and switches branches, deploying the branch\'s flows', async () => {
    const made = await call('projects/alpha/branches', { method: 'POST', json: { name: 'feature', create: true } });
    assert.equal(made.status, 200, made.text);
    await deploy(server, [tab, inject('n1', 'on feature')]);
    await call('projects/alpha/stage', { method: 'POST', json: { files: ['flows.json'] } });
    await call('projects/alpha/commit', { method: 'POST', json: { message: 'Feature work' } });
    const back = await call('projects/alpha/branches', { method: 'POST', json: { name: 'main' } });
    assert.equal(back.status, 200, back.text);
    assert.deepEqual(back.body.branches.map((b: { name: string; current?: boolean }) => [b.name, b.current === true]), [['feature', false], ['main', true]]);
    const flows = await call('flows');
    assert.equal(flows.body.find((n: { id: string }) => n.id === 'n1').name, 'first');
  });

  it('opens another project with its own flows, and clearContext drops the context values', async () => {
    await deploy(server, [tab, inject('n1', 'first'), { id: 'f1', type: 'function', z: 't1', func: 'global.set("kept", 42); return msg;', wires: [] }]);
    globalContext(server).set('kept', 42);
    const beta = await call('projects', { method: 'POST', json: { name: 'beta', files: { flow: 'beta.json' }, credentialSecret: false } });
    assert.equal(beta.status, 200, beta.text);
    assert.deepEqual((await call('flows')).body, []);
    assert.equal(globalContext(server).get('kept'), 42, 'creating a project keeps the context');

    const opened = await call('projects/alpha', { method: 'PUT', json: { active: true, clearContext: true } });
    assert.equal(opened.status, 200, opened.text);
    assert.equal(opened.body.active, 'alpha');
    assert.equal((await call('flows')).body.find((n: { id: string }) => n.id === 'n1').name, 'first');
    assert.equal(globalContext(server).get('kept'), undefined);
  });

  it('refuses to delete the active project and deletes another', async () => {
    const refused = await call('projects/alpha', { method: 'DELETE' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'cannot_delete_active_project');
    assert.equal((await call('projects/beta', { method: 'DELETE' })).status, 204);
    assert.deepEqual((await call('projects')).body.projects, ['alpha']);
  });

  it('answers Node-RED\'s codes for a name taken, a project that does not exist and one that is not active', async () => {
    const taken = await call('projects', { method: 'POST', json: { name: 'alpha', files: { flow: 'flows.json' } } });
    assert.deepEqual([taken.status, taken.body.code], [400, 'project_exists']);
    const missing = await call('projects/nothing-here');
    assert.deepEqual([missing.status, missing.body.code], [400, 'project_not_found']);
    await call('projects', { method: 'POST', json: { name: 'gamma', files: { flow: 'flows.json' } } });
    await call('projects/alpha', { method: 'PUT', json: { active: true } });
    const inactive = await call('projects/gamma/status');
    assert.deepEqual([inactive.status, inactive.body.code], [400, 'project_not_active']);
  });

  it('refuses project names that are paths, dots, empty or too long, and file paths outside the project', async () => {
    for (const name of ['../escape', 'a/b', '.', '..', '.hidden', '', ' ', 'x'.repeat(65), 'a.b', 'tab\tname']) {
      const res = await call('projects', { method: 'POST', json: { name, files: { flow: 'flows.json' } } });
      assert.deepEqual([res.status, res.body.code], [400, 'invalid_project_name'], JSON.stringify(name));
    }
    const outside = await call('projects', { method: 'POST', json: { name: 'delta', files: { flow: '../../flows.json' } } });
    assert.equal(outside.status, 400);
    for (const p of ['projects/alpha/files/_/..%2F..%2F.config.projects.json', 'projects/alpha/files/_/.git%2Fconfig', 'projects/alpha/diff/tree/..%2Fx']) {
      const res = await call(p);
      assert.equal(res.status, 400, `${p}: ${res.text}`);
    }
    const ref = await call('projects/alpha/files/--output=x/flows.json');
    assert.deepEqual([ref.status, ref.body.code], [400, 'git_invalid_argument']);
  });
});

describe('Projects: workflow mode auto', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ editorTheme: { projects: { enabled: true, workflow: { mode: 'auto' } } } });
  });
  after(() => server.dispose());

  it('commits the flows file on every deploy', async () => {
    const call = api(server);
    await call('settings/user', { method: 'POST', json: GIT_USER });
    assert.equal((await call('projects', { method: 'POST', json: { name: 'auto', files: { flow: 'flows.json' }, credentialSecret: 's' } })).status, 200);
    assert.equal((await call('settings')).body.editorTheme.projects.workflow.mode, 'auto');
    await deploy(server, [tab, inject('n1', 'committed on deploy')]);
    const commits = await eventually(async () => {
      const res = await call('projects/auto/commits');
      return res.body.total === 2 ? res.body : undefined;
    });
    assert.equal(commits.commits[0].subject, 'Update flow files');
    assert.equal((await call('projects/auto/status')).body.files['flows.json'].status, undefined);
  });
});

describe('Projects: permissions', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ...PROJECTS_ON, adminAuth: adminAuth() });
  });
  after(() => server.dispose());

  it('projects.read lists, projects.write is needed to create', async () => {
    const reader = api(server, await login(server, 'reader', READER_PASSWORD, 'read'));
    assert.equal((await reader('projects')).status, 200);
    const refused = await reader('projects', { method: 'POST', json: { name: 'nope', files: { flow: 'flows.json' } } });
    assert.equal(refused.status, 401);
    assert.equal((await request(server.at('projects'))).status, 401);
    const admin = api(server, await login(server));
    assert.equal((await admin('settings/user', { method: 'POST', json: GIT_USER })).status, 204);
    assert.equal((await admin('projects', { method: 'POST', json: { name: 'yes', files: { flow: 'flows.json' } } })).status, 200);
  });
});

describe('Projects: a Node-RED user dir with a project', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => removeDir(dir));

  it('opens unchanged: the active project\'s flows run, its credentials decrypt with its credentialSecret', async () => {
    const project = path.join(dir, 'projects', 'legacy');
    await mkdir(project, { recursive: true });
    const flows = [tab, { id: 'h1', type: 'http request', z: 't1', name: 'with creds', method: 'GET', url: 'http://127.0.0.1:1/', authType: 'basic', wires: [] }];
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'legacy', version: '0.0.1', 'node-red': { settings: { flowFile: 'flow.json', credentialsFile: 'flow_cred.json' } } }, null, 4));
    await writeFile(path.join(project, 'flow.json'), JSON.stringify(flows, null, 4));
    await writeFile(path.join(project, 'flow_cred.json'), JSON.stringify(nodeRedEncrypt({ h1: { user: 'bob', password: 'hunter2' } }, 'legacy-secret'), null, 4));
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: project });
    execFileSync('git', ['add', '.'], { cwd: project });
    execFileSync('git', ['-c', 'user.name=NR', '-c', 'user.email=nr@example.test', 'commit', '-q', '-m', 'Made by Node-RED'], { cwd: project });
    await writeFile(path.join(dir, '.config.projects.json'), JSON.stringify({ activeProject: 'legacy', projects: { legacy: { credentialSecret: 'legacy-secret' } } }, null, 4));

    const server = await startServer(PROJECTS_ON, dir);
    try {
      const call = api(server);
      assert.deepEqual((await call('projects')).body, { projects: ['legacy'], active: 'legacy' });
      assert.equal((await call('flows')).body.find((n: { id: string }) => n.id === 'h1').name, 'with creds');
      const creds = await call('credentials/http-request/h1');
      assert.equal(creds.status, 200, creds.text);
      assert.equal(creds.body.user, 'bob');
      assert.equal(creds.body.has_password, true);
      const status = await call('projects/legacy/status');
      assert.equal(status.body.commits.total, 1);
      assert.deepEqual(Object.entries(status.body.files).filter(([, f]) => (f as { status?: string }).status !== undefined), []);
    } finally {
      await server.stop();
    }
  });
});

/** Node-RED's credentials file: aes-256-ctr with sha256(secret), a hex IV before the base64 text. */
function nodeRedEncrypt(creds: unknown, secret: string): { $: string } {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-ctr', createHash('sha256').update(secret).digest(), iv);
  return { $: iv.toString('hex') + cipher.update(JSON.stringify(creds), 'utf8', 'base64') + cipher.final('base64') };
}

/** The global context as a flow sees it. */
function globalContext(server: TestServer) {
  return server.instance.runtime.context.getGlobalContext();
}

describe('Projects: the first project takes the running flows', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(PROJECTS_ON);
  });
  after(() => server.dispose());

  it('migrates the flows and their credentials into the project with migrateFiles, as the editor\'s welcome asks', async () => {
    const call = api(server);
    await call('settings/user', { method: 'POST', json: GIT_USER });
    const flows = [tab, { id: 'h1', type: 'http request', z: 't1', name: 'kept', method: 'GET', url: 'http://127.0.0.1:1/', authType: 'basic', wires: [] }];
    assert.equal((await call('flows', { method: 'POST', json: { flows, credentials: { h1: { user: 'bob', password: 'pw' } } }, headers: { 'Node-RED-API-Version': 'v2' } })).status, 200);
    const created = await call('projects', { method: 'POST', json: { name: 'first', files: { flow: 'flows.json', credentials: 'flows_cred.json' }, migrateFiles: true, credentialSecret: 'first-secret' } });
    assert.equal(created.status, 200, created.text);
    assert.equal((await call('flows')).body.find((n: { id: string }) => n.id === 'h1').name, 'kept');
    assert.equal((await call('credentials/http-request/h1')).body.user, 'bob');
    const commits = await call('projects/first/commits');
    assert.deepEqual(commits.body.commits.map((c: { subject: string }) => c.subject), ['Migrate the flows into the project', 'Create project']);
    const committed = JSON.parse((await call(`projects/first/files/${commits.body.commits[0].sha}/flows.json`)).body.content);
    assert.equal(committed.find((n: { id: string }) => n.id === 'h1').name, 'kept');
  });
});
