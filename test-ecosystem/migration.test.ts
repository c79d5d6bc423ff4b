/**
 * Node-RED 4.1.15 → Runnel → Node-RED on one user dir, as the README's migration guide tells a
 * user to do it: Node-RED's own settings.js (adminAuth, a localfilesystem context store), flows
 * with credentials deployed through Node-RED's API, Runnel started with only `--user-dir`, a change
 * deployed there, `runnel export --format node-red`, Node-RED started again. Nothing may be lost:
 * the login, the credentials (a node sends them), the file context, the change.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { login } from '../bench/admin-client.js';
import { ensurePeer } from '../bench/peer.js';
import { decryptNodeRedBlob } from '../src/credentials/nodered-cipher.js';
import { removeDir, tempDir } from '../test/helpers/dirs.js';
import { withFreePort } from '../test/helpers/ports.js';
import { killRunnels, runCli, spawnRunnelWith } from '../test/helpers/process.js';
import { ADMIN_PASSWORD, adminAuth } from '../test/helpers/users.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const peerDir = path.join(root, 'bench', '.peer');
const START_TIMEOUT_MS = 60_000;

/** Node-RED's stock settings, trimmed: no credentialSecret, so Node-RED generates its key. */
function settingsJs(extra = '', theme = ''): string {
  return `module.exports = {
    uiPort: process.env.PORT || 1880,
    flowFile: 'flows.json',
    flowFilePretty: true,${extra}
    adminAuth: ${JSON.stringify(adminAuth())},
    contextStorage: { default: { module: 'memory' }, file: { module: 'localfilesystem' } },
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    telemetry: { enabled: false, updateNotification: false },
    editorTheme: { palette: { catalogues: [] }, tours: false${theme} },
};
`;
}

/**
 * GET /cred makes the http request node call the echo server with its basic-auth credentials;
 * GET /ctx?who=x appends x to a list kept in the file context store and answers the list.
 */
function flows(echoPort: number) {
  return [
    { id: 't1', type: 'tab', label: 'Migration' },
    { id: 'in1', type: 'http in', z: 't1', url: '/cred', method: 'get', x: 100, y: 40, wires: [['req']] },
    { id: 'req', type: 'http request', z: 't1', method: 'GET', ret: 'txt', url: `http://127.0.0.1:${echoPort}/`, authType: 'basic', x: 250, y: 40, wires: [['out1']] },
    { id: 'out1', type: 'http response', z: 't1', x: 400, y: 40, wires: [] },
    { id: 'in2', type: 'http in', z: 't1', url: '/ctx', method: 'get', x: 100, y: 100, wires: [['fn']] },
    {
      id: 'fn', type: 'function', z: 't1', outputs: 1, x: 250, y: 100, wires: [['out2']],
      func: "const list = global.get('visits', 'file') || []; list.push(msg.req.query.who); global.set('visits', list, 'file'); msg.payload = list; return msg;",
    },
    { id: 'out2', type: 'http response', z: 't1', x: 400, y: 100, wires: [] },
  ];
}

interface Running {
  base: string;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();

async function answering(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}) during start:\n${output()}`);
    if (await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${START_TIMEOUT_MS / 1000} s:\n${output()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = once(child, 'exit').then(() => undefined);
  child.kill('SIGTERM');
  return exited;
}

/**
 * `node-red -u DIR` with the port from the env, as a user starts it: it reads DIR/settings.js. A port
 * taken since the probe makes Node-RED exit "port in use", and it starts again on another.
 */
function startNodeRed(userDir: string): Promise<Running> {
  return withFreePort(async (port) => {
    const child = spawn(process.execPath, [path.join(peerDir, 'node_modules', 'node-red', 'red.js'), '-u', userDir], {
      cwd: userDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: String(port) },
    });
    children.add(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const base = `http://127.0.0.1:${port}/`;
    await answering(`${base}auth/login`, child, () => out);
    return { base, stop: () => stopChild(child) };
  });
}

async function get(base: string, route: string, token?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(base + route, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: await res.text() };
}

/** Polls until `route` answers 200 with `expected` (Node-RED answers a deploy before its nodes run). */
async function answers(base: string, route: string, expected: unknown): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last: unknown;
  while (Date.now() < deadline) {
    const r = await get(base, route).catch((e: Error) => ({ status: 0, body: e.message }));
    last = r;
    if (r.status === 200 && r.body === (typeof expected === 'string' ? expected : JSON.stringify(expected))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${base}${route} never answered ${JSON.stringify(expected)}; last: ${JSON.stringify(last)}`);
}

async function post(base: string, route: string, token: string, body: unknown): Promise<{ status: number; body: string }> {
  const res = await fetch(base + route, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: await res.text() };
}

async function deployTo(base: string, token: string, body: unknown): Promise<void> {
  const res = await fetch(`${base}flows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  assert.equal(res.status, 200, await res.text());
}

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;

describe('a Node-RED 4.1.15 user dir goes to Runnel and back with nothing lost', { timeout: 900_000 }, () => {
  let dir: string;
  let echo: Server;
  let echoPort: number;

  before(async () => {
    await ensurePeer(peerDir, (line) => console.log(line));
    dir = await tempDir('runnel-migration-');
    // Answers with the basic-auth user:password it was sent.
    echo = createServer((req, res) => {
      const auth = req.headers.authorization ?? '';
      res.end(auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString('utf8') : 'no credentials');
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoPort = (echo.address() as AddressInfo).port;
  }, { timeout: 600_000 });

  after(async () => {
    killRunnels();
    await Promise.all([...children].map(stopChild));
    echo?.close();
    await removeDir(dir);
  });

  async function nodeRedRound(userDir: string, flowsBody: unknown, who: string, expectCred: string, expectVisits: string[]): Promise<void> {
    const red = await startNodeRed(userDir);
    try {
      const token = await login(red.base, 'admin', ADMIN_PASSWORD);
      if (flowsBody !== undefined) await deployTo(red.base, token, flowsBody);
      await answers(red.base, 'cred', expectCred);
      await answers(red.base, `ctx?who=${who}`, expectVisits);
    } finally {
      await red.stop();
    }
  }

  async function runnelRound(userDir: string): Promise<void> {
    const runnel = await spawnRunnelWith(['start', '--user-dir', userDir, '--port', '0'], dir);
    try {
      assert.match(runnel.output(), new RegExp(`"settingsFile":"${path.join(userDir, 'settings.js')}"`), 'the summary names the user dir\'s settings.js');
      assert.equal((await get(runnel.url, 'flows')).status, 401, 'adminAuth from settings.js is on');
      assert.doesNotMatch(runnel.output(), /"level":(50|60)/, 'nothing in the Node-RED user dir is an error');
      const token = await login(runnel.url, 'admin', ADMIN_PASSWORD);
      const state = JSON.parse((await get(runnel.url, 'flows/state', token)).body) as { state: string; errors?: unknown[] };
      assert.equal(state.state, 'start');
      assert.deepEqual(state.errors ?? [], []);
      await answers(runnel.url, 'cred', 'alice:s3cret');
      await answers(runnel.url, 'ctx?who=runnel', ['node-red', 'runnel']);
      // The change: a new password, and a node Node-RED must find afterwards.
      const current = JSON.parse((await get(runnel.url, 'flows', token)).body) as Record<string, unknown>[];
      const changed = current.map((n) => (n.id === 'req' ? { ...n, credentials: { user: 'alice', password: 'changed' } } : n));
      await deployTo(runnel.url, token, { flows: [...changed, { id: 'note', type: 'comment', z: 't1', name: 'added on Runnel', x: 100, y: 160, wires: [] }] });
      await answers(runnel.url, 'cred', 'alice:changed');
    } finally {
      runnel.child.kill('SIGTERM');
      assert.equal(await runnel.exited, 0, runnel.output());
    }
  }

  it('with the key Node-RED generated, exported in place', { timeout: 300_000 }, async () => {
    const userDir = path.join(dir, 'generated-key');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'settings.js'), settingsJs());
    const body = { flows: flows(echoPort).map((n) => (n.id === 'req' ? { ...n, credentials: { user: 'alice', password: 's3cret' } } : n)) };
    await nodeRedRound(userDir, body, 'node-red', 'alice:s3cret', ['node-red']);
    const nodeRedCreds = await readFile(path.join(userDir, 'flows_cred.json'), 'utf8');
    const generated = (await readJson(path.join(userDir, '.config.runtime.json')))._credentialSecret as string;
    assert.deepEqual(decryptNodeRedBlob(JSON.parse(nodeRedCreds).$, generated), { req: { user: 'alice', password: 's3cret' } });

    await runnelRound(userDir);
    assert.equal(await readFile(path.join(userDir, 'flows_cred.json.node-red.bak'), 'utf8'), nodeRedCreds, 'Node-RED\'s credentials file is kept');
    assert.equal((await readJson(path.join(userDir, 'flows_cred.json'))).$runnel, 1);

    const exported = await runCli(['export', '--format', 'node-red', '--user-dir', userDir], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(exported.code, 0, exported.stdout + exported.stderr);
    assert.match(exported.stdout, /exported 8 flow nodes and the credentials of 1 node \(flows_cred\.json, \.sessions\.json\)/);
    assert.equal((await readJson(path.join(userDir, '.config.runtime.json')))._credentialSecret, generated, 'the same key stays');

    await nodeRedRound(userDir, undefined, 'back', 'alice:changed', ['node-red', 'runnel', 'back']);
    const red = await startNodeRed(userDir);
    try {
      const token = await login(red.base, 'admin', ADMIN_PASSWORD);
      const back = JSON.parse((await get(red.base, 'flows', token)).body) as { id: string; name?: string }[];
      assert.equal(back.find((n) => n.id === 'note')?.name, 'added on Runnel');
    } finally {
      await red.stop();
    }
  });

  it('Runnel\'s module records stay where Runnel wrote them: Node-RED moves none into .config.modules.json', { timeout: 300_000 }, async () => {
    const userDir = path.join(dir, 'module-records');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'settings.js'), settingsJs());
    const runnel = await spawnRunnelWith(['start', '--user-dir', userDir, '--port', '0'], dir);
    try {
      const token = await login(runnel.url, 'admin', ADMIN_PASSWORD);
      const res = await fetch(`${runnel.url}nodes/node-red/rbe`, {
        method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"enabled":false}', signal: AbortSignal.timeout(15_000),
      });
      assert.equal(res.status, 200, await res.text());
    } finally {
      runnel.child.kill('SIGTERM');
      assert.equal(await runnel.exited, 0, runnel.output());
    }
    const written = await readJson(path.join(userDir, '.config.runtime.json'));
    const red = await startNodeRed(userDir);
    await red.stop();
    // Node-RED's storage moves a `modules` key of .config.runtime.json there, as its own record.
    const moved = await readJson(path.join(userDir, '.config.modules.json')).catch(() => ({}));
    assert.deepEqual(moved, {}, 'Node-RED keeps no Runnel record as its own');
    const after = await readJson(path.join(userDir, '.config.runtime.json'));
    assert.ok(written.runnelModules, 'Runnel recorded the disabled set');
    // Node-RED adds its own keys (instanceId) and leaves every other key as it found it.
    assert.deepEqual(Object.fromEntries(Object.keys(written).map((k) => [k, after[k]])), written, 'what Runnel keeps in .config.runtime.json is there for its return');
  });

  it('with credentialSecret in settings.js, exported into another folder', { timeout: 300_000 }, async () => {
    const userDir = path.join(dir, 'own-secret');
    const out = path.join(dir, 'own-secret-back');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'settings.js'), settingsJs("\n    credentialSecret: 'a secret of my own',"));
    const body = { flows: flows(echoPort).map((n) => (n.id === 'req' ? { ...n, credentials: { user: 'alice', password: 's3cret' } } : n)) };
    await nodeRedRound(userDir, body, 'node-red', 'alice:s3cret', ['node-red']);

    await runnelRound(userDir);
    const exported = await runCli(['export', '--format', 'node-red', '--user-dir', userDir, '--out', out], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(exported.code, 0, exported.stdout + exported.stderr);
    assert.match(exported.stdout, /\(settings\.js, flows\.json, flows_cred\.json, context\/, \.config\.nodes\.json\)/);
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(out, 'flows_cred.json'))).$ as string, 'a secret of my own'), { req: { user: 'alice', password: 'changed' } });

    await nodeRedRound(out, undefined, 'back', 'alice:changed', ['node-red', 'runnel', 'back']);
  });

  it('with a project: Node-RED creates and commits it, Runnel opens and deploys it, Node-RED opens it again', { timeout: 300_000 }, async () => {
    const userDir = path.join(dir, 'project');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'settings.js'), settingsJs('', ', projects: { enabled: true }'));
    const red = await startNodeRed(userDir);
    try {
      const token = await login(red.base, 'admin', ADMIN_PASSWORD);
      assert.equal((await post(red.base, 'settings/user', token, { git: { user: { name: 'Ada', email: 'ada@example.test' } } })).status, 204);
      const created = await post(red.base, 'projects', token, { name: 'roundtrip', files: { flow: 'flows.json' }, credentialSecret: 'project secret' });
      assert.equal(created.status, 200, created.body);
      await deployTo(red.base, token, { flows: flows(echoPort).map((n) => (n.id === 'req' ? { ...n, credentials: { user: 'alice', password: 's3cret' } } : n)) });
      await answers(red.base, 'cred', 'alice:s3cret');
      await answers(red.base, 'ctx?who=node-red', ['node-red']);
      assert.equal((await post(red.base, 'projects/roundtrip/stage', token, { files: ['flows.json', 'flows_cred.json'] })).status, 200);
      assert.equal((await post(red.base, 'projects/roundtrip/commit', token, { message: 'Deployed on Node-RED' })).status, 200);
    } finally {
      await red.stop();
    }
    const credsFile = path.join(userDir, 'projects', 'roundtrip', 'flows_cred.json');

    await runnelRound(userDir);
    // Runnel writes the project's file as Node-RED does: Node-RED opens it with the project's secret.
    assert.deepEqual(decryptNodeRedBlob((await readJson(credsFile)).$ as string, 'project secret'), { req: { user: 'alice', password: 'changed' } });
    await nodeRedRound(userDir, undefined, 'back', 'alice:changed', ['node-red', 'runnel', 'back']);
  });
});
