import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseNodeRedArgs } from '../../src/cli/node-red-args.js';
import { RUNNEL_VERSION } from '../../src/base/version.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { killRunnels, NODE_RED_BIN, runCli, spawnRunnelWith, type RunnelProcess } from '../helpers/process.js';
import { request } from '../helpers/server.js';

/**
 * `node-red` (bin/node-red.js): Node-RED's own command line (red.js) starting Runnel, so scripts,
 * service units and images that call `node-red` need no change. Each case runs the real command.
 */

const nodeRed = (args: string[], cwd: string, env: Record<string, string> = {}) => spawnRunnelWith(args, cwd, env, process.execPath, NODE_RED_BIN);
const nodeRedCli = (args: string[], cwd: string, env: Record<string, string> = {}) => runCli(args, { cwd, bin: NODE_RED_BIN, env, timeoutMs: 30_000 });

async function stop(run: RunnelProcess): Promise<void> {
  run.child.kill('SIGTERM');
  assert.equal(await run.exited, 0, run.output());
}

/** An http-in flow at /answer that replies with what `func` sets msg.payload to. */
function answering(func: string): Record<string, unknown>[] {
  return [
    { id: 't', type: 'tab' },
    { id: 'in', type: 'http in', z: 't', url: '/answer', method: 'get', wires: [['fn']] },
    { id: 'fn', type: 'function', z: 't', outputs: 1, func: `${func}; return msg;`, wires: [['out']] },
    { id: 'out', type: 'http response', z: 't', wires: [] },
  ];
}

describe('node-red: Node-RED\'s command line over Runnel', { timeout: 180_000 }, () => {
  const dirs: string[] = [];
  after(async () => {
    killRunnels();
    await Promise.all(dirs.map(removeDir));
  });
  const dir = async () => {
    const d = await tempDir('runnel-node-red-cli-');
    dirs.push(d);
    return d;
  };

  it('reads red.js\'s options as nopt does: short, grouped, abbreviated, =value, booleans taking true/false, -D repeated, unknown flags kept aside', () => {
    const cwd = '/work';
    assert.deepEqual(parseNodeRedArgs(['-u', 'data', '-p', '1881', '-s', '/etc/s.js', 'my.json', '--title', 'T', '-D', 'a=1', '--define=b.c=x', '--safe'], cwd), {
      help: false, version: false, verbose: false, safe: true, port: 1881, settings: '/etc/s.js', userDir: '/work/data',
      title: 'T', define: ['a=1', 'b.c=x'], flowFile: 'my.json', unknown: [],
    });
    assert.equal(parseNodeRedArgs(['-vp', '1882']).port, 1882);
    assert.equal(parseNodeRedArgs(['-vp', '1882']).verbose, true);
    assert.equal(parseNodeRedArgs(['--verb']).verbose, true);
    assert.equal(parseNodeRedArgs(['--userDir=/d']).userDir, '/d');
    assert.equal(parseNodeRedArgs(['--safe', 'false', 'f.json']).safe, false);
    assert.equal(parseNodeRedArgs(['--safe', 'false', 'f.json']).flowFile, 'f.json');
    assert.equal(parseNodeRedArgs(['-?']).help, true);
    assert.equal(parseNodeRedArgs(['-t']).help, true);
    assert.equal(parseNodeRedArgs(['-p', '0']).port, 0);
    assert.deepEqual(parseNodeRedArgs(['--no-telemetry']).unknown, []);
    // As nopt: an unknown option is a flag, and what follows it is a positional.
    const unknown = parseNodeRedArgs(['--user-dir', 'x', '-x', '--', '-y']);
    assert.deepEqual(unknown.unknown, ['--user-dir', '-x']);
    assert.equal(unknown.flowFile, 'x');
    assert.throws(() => parseNodeRedArgs(['-p', 'abc']), /-p must be a port number/);
    assert.throws(() => parseNodeRedArgs(['-u']), /-u needs a value/);
  });

  it('--help lists the options and exits 0; --version says Runnel\'s and Node.js\'s versions; admin and a bad port exit 1', async () => {
    const cwd = await dir();
    const help = await nodeRedCli(['--help'], cwd);
    assert.equal(help.code, 0, help.stderr);
    for (const option of ['-p, --port', '-s, --settings', '--title', '-u, --userDir', '-v, --verbose', '--safe', '-D, --define', '--version', '-?, --help']) {
      assert.ok(help.stdout.includes(option), `--help lists ${option}:\n${help.stdout}`);
    }
    const version = await nodeRedCli(['--version'], cwd);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^Runnel v\d+\.\d+\.\d+ \(runs Node-RED 5\.0\.\d+ flows\)\nNode\.js v\d+/);
    const admin = await nodeRedCli(['admin', 'list'], cwd);
    assert.equal(admin.code, 1);
    assert.match(admin.stderr, /node-red-admin/);
    const port = await nodeRedCli(['-p', 'abc'], cwd);
    assert.equal(port.code, 1);
    assert.match(port.stderr, /-p must be a port number \(0 to 65535\), got abc/);
  });

  it('-u DIR myflows.json runs DIR/myflows.json with DIR/settings.js; -D sets nested keys with JSON values, -p and the flows file win', async () => {
    const cwd = await dir();
    const userDir = path.join(cwd, 'data');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'settings.js'), 'module.exports = { uiPort: 1, logging: { console: { level: "warn" } }, functionGlobalContext: { fromFile: "yes" } };\n');
    await writeFile(path.join(userDir, 'myflows.json'), JSON.stringify(answering(
      'const g = (k) => global.get(k); msg.payload = { fromFile: g("fromFile"), n: g("n"), b: g("b"), s: g("s"), o: g("o"), deep: g("deep") }',
    )));
    const run = await nodeRed([
      '-u', userDir, 'myflows.json', '-p', '0', '--title', 'runnel-under-test',
      '-D', 'functionGlobalContext.n=42', '-D', 'functionGlobalContext.b=true', '-D', 'functionGlobalContext.s=hello world',
      '-D', 'functionGlobalContext.o={"a":[1]}', '-D', 'functionGlobalContext.deep.er=x', '-D', 'uiPort=2',
      '-D', 'httpNodeCors.origin=https://app.example',
    ], cwd);
    try {
      const res = await request(new URL('answer', run.url).href, { headers: { origin: 'https://app.example' } });
      assert.equal(res.status, 200, run.output());
      assert.deepEqual(res.body, { fromFile: 'yes', n: 42, b: true, s: 'hello world', o: { a: [1] }, deep: { er: 'x' } });
      assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
      assert.doesNotMatch(run.url, /:(1|2)\/$/);
      // Node-RED renames its process, so `pidof`/`pkill` scripts find it; --title chooses the name.
      assert.equal(await readCmdline(run.child.pid!), 'runnel-under-test');
      assert.ok((await readdir(userDir)).includes('.config.runtime.json'), 'the user dir is DIR');
    } finally {
      await stop(run);
    }
  });

  it('without -u the user dir is ~/.node-red, as Node-RED\'s, and one line says where it listens; --safe loads the flows stopped and GET /flows/state says safe', async () => {
    const home = await dir();
    const userDir = path.join(home, '.node-red');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(answering('msg.payload = "ran"')));
    const run = await nodeRed(['--safe', '-p', '0'], home, { HOME: home });
    try {
      assert.deepEqual((await request(new URL('flows/state', run.url).href)).body, { state: 'safe' });
      assert.equal((await request(new URL('answer', run.url).href)).status, 404);
      assert.ok((await readdir(userDir)).includes('.config.runtime.json'));
      // At the default log level: the start summary's line is the one that says where it listens.
      const listening = run.output().split('\n').filter((l) => /listening/i.test(l));
      assert.equal(listening.length, 1, run.output());
      assert.ok(listening[0]!.endsWith(`Runnel ${RUNNEL_VERSION} listening on ${run.url}`), listening[0]);
      // Text lines, as Node-RED writes them to a service's or container's stdout (not a terminal here).
      assert.ok(run.output().split('\n').every((l) => !l.startsWith('{')), run.output());
    } finally {
      await stop(run);
    }
    const env = await nodeRed(['-p', '0'], home, { HOME: home, NODE_RED_ENABLE_SAFE_MODE: 'true' });
    try {
      assert.deepEqual((await request(new URL('flows/state', env.url).href)).body, { state: 'safe' });
    } finally {
      await stop(env);
    }
  });

  it('-v logs a node\'s error with its stack; without it, the message alone', async () => {
    const cwd = await dir();
    const flows = answering('node.error(new Error("verbose-probe"), undefined); msg.payload = "ok"');
    const lines = async (args: string[]) => {
      const userDir = path.join(cwd, `u${args.length}`);
      await mkdir(userDir);
      await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(flows));
      const run = await nodeRed(['-u', userDir, '-p', '0', ...args], cwd);
      try {
        assert.equal((await request(new URL('answer', run.url).href)).text, 'ok');
      } finally {
        await stop(run);
      }
      return run.output();
    };
    // Text lines (stdout is not a terminal here, and `node-red` writes as Node-RED does): the error's
    // line, then with -v its stack on the lines under it.
    const quiet = await lines([]);
    assert.match(quiet, /\[error\] \[function:fn\] Error: verbose-probe\n/);
    assert.doesNotMatch(quiet, /verbose-probe\n\s+(Error: verbose-probe\n\s+)?at /);
    const verbose = await lines(['-v']);
    assert.match(verbose, /\[error\] \[function:fn\] Error: verbose-probe\n\s+Error: verbose-probe\n\s+at /);
  });

  it('bad settings name a hash-pw command that runs from where the user started', async () => {
    const cwd = await dir();
    await writeFile(path.join(cwd, 'settings.json'), JSON.stringify({ adminAuth: { type: 'credentials', users: [{ username: 'a', password: 'plain' }] } }));
    const r = await nodeRedCli(['-s', 'settings.json', '-u', cwd], cwd);
    assert.equal(r.code, 1);
    const command = /make one with "node (\S+) hash-pw"/.exec(r.stderr);
    assert.ok(command, r.stderr);
    const hashed = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [command[1]!, 'hash-pw'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.on('exit', (code) => resolve({ code, out }));
      child.stdin.end('pw\n');
    });
    assert.equal(hashed.code, 0);
    assert.match(hashed.out, /^\$2b\$10\$/);
  });
});

async function readCmdline(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replace(/\0+$/, '');
}
