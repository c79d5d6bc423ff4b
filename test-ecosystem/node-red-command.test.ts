/**
 * Node-RED 4.1.15 (the bench's peer, installed once from npm) and Runnel, each started by the same
 * `node-red` command line on copies of the same user dir, answer alike; and Node-RED runs every
 * flow of a folder `runnel export --out` wrote, once `npm install` there brought the node module the
 * flows use (from a local folder, so npm needs no registry).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePeer } from '../bench/peer.js';
import { deploy } from '../test/helpers/deploy.js';
import { removeDir, tempDir } from '../test/helpers/dirs.js';
import { NODE_RED_BIN, runCli } from '../test/helpers/process.js';
import { eventually, startServer } from '../test/helpers/server.js';
import { PEER_DIR, RED_JS, startNodeRed, stopNodeReds } from './node-red-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: await res.text() };
}

describe('the node-red command line and the way back, against Node-RED 4.1.15', { timeout: 900_000 }, () => {
  let dir: string;
  before(async () => {
    await ensurePeer(PEER_DIR, (line) => console.log(line));
    dir = await tempDir('runnel-node-red-command-');
  }, { timeout: 600_000 });
  after(async () => {
    await stopNodeReds();
    await removeDir(dir);
  });

  it('-u DIR flows-file -D values: both run DIR/flows-file with the same settings, and answer alike', async () => {
    const flows = [
      { id: 't', type: 'tab' },
      { id: 'in', type: 'http in', z: 't', url: '/answer', method: 'get', wires: [['fn']] },
      { id: 'fn', type: 'function', z: 't', outputs: 1, wires: [['out']], func: 'const g = (k) => global.get(k); msg.payload = { n: g("n"), b: g("b"), s: g("s"), o: g("o"), deep: g("deep") }; return msg;' },
      { id: 'out', type: 'http response', z: 't', wires: [] },
    ];
    const args = (userDir: string) => ['-u', userDir, 'mine.json', '-D', 'functionGlobalContext.n=42', '-D', 'functionGlobalContext.b=false',
      '-D', 'functionGlobalContext.s=two words', '-D', 'functionGlobalContext.o={"a":[1,"x"]}', '-D', 'functionGlobalContext.deep.er=1.5'];
    const answers: Record<string, unknown>[] = [];
    for (const [name, bin] of [['node-red', RED_JS], ['runnel', NODE_RED_BIN]] as const) {
      const userDir = path.join(dir, `cli-${name}`);
      await mkdir(userDir);
      await writeFile(path.join(userDir, 'mine.json'), JSON.stringify(flows));
      const run = await startNodeRed(bin, args(userDir), dir, 'answer');
      try {
        const answer = await get(`${run.base}answer`);
        const state = await get(`${run.base}flows/state`);
        answers.push({ answer: answer.status === 200 ? JSON.parse(answer.body) : answer, state: JSON.parse(state.body) });
      } finally {
        await run.stop();
      }
      const safe = await startNodeRed(bin, [...args(userDir), '--safe'], dir, 'flows/state');
      try {
        // Node-RED answers `start` from its listen until its flows have loaded (and been held back).
        const state = async () => JSON.parse((await get(`${safe.base}flows/state`)).body) as { state: string };
        answers[answers.length - 1]!.safe = await eventually(async () => {
          const now = await state();
          return now.state === 'safe' ? now : undefined;
        }, 30_000).catch(state);
      } finally {
        await safe.stop();
      }
    }
    assert.deepEqual(answers[1], answers[0]);
    assert.deepEqual(answers[0], { answer: { n: 42, b: false, s: 'two words', o: { a: [1, 'x'] }, deep: { er: 1.5 } }, state: { state: 'start' }, safe: { state: 'safe' } });
  });

  it('-s FILE, --title, -v: the settings file given is read, the title taken, an error logged with its stack only when verbose', async () => {
    const flows = [
      { id: 't', type: 'tab' },
      { id: 'in', type: 'http in', z: 't', url: '/who', method: 'get', x: 1, y: 1, wires: [['fn']] },
      { id: 'fn', type: 'function', z: 't', name: 'thrower', outputs: 1, x: 1, y: 1, wires: [['out']], func: 'msg.payload = global.get("from"); node.error(new Error("boom")); return msg;' },
      { id: 'out', type: 'http response', z: 't', x: 1, y: 1, wires: [] },
    ];
    const seen: unknown[] = [];
    for (const [name, bin] of [['node-red', RED_JS], ['runnel', NODE_RED_BIN]] as const) {
      const userDir = path.join(dir, `flags-${name}`);
      await mkdir(path.join(userDir, 'elsewhere'), { recursive: true });
      await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(flows));
      // The user dir's own settings.js is not the one -s names.
      await writeFile(path.join(userDir, 'settings.js'), 'module.exports = { functionGlobalContext: { from: "the user dir" } };\n');
      const settings = path.join(userDir, 'elsewhere', 'my-settings.js');
      await writeFile(settings, 'module.exports = { flowFile: "flows.json", functionGlobalContext: { from: "-s" } };\n');
      for (const verbose of [true, false]) {
        const run = await startNodeRed(bin, ['-u', userDir, '-s', settings, '--title', 'flow-title', ...(verbose ? ['-v'] : [])], dir, 'flows');
        try {
          const answer = await eventually(async () => {
            const r = await get(`${run.base}who`);
            return r.status === 200 ? r : undefined;
          });
          await eventually(() => /boom/.test(run.output()));
          const title = (await readFile(`/proc/${run.pid}/cmdline`, 'utf8')).split('\0')[0];
          // Runnel's log is JSON lines when stdout is not a terminal (README, logging.format): the stack's newlines escaped.
          seen.push({ name, verbose, answer, title, stack: /Error: boom(\n|\\n)\s+at /.test(run.output()) });
        } finally {
          await run.stop();
        }
      }
    }
    const expected = (name: string) => [true, false].map((verbose) => ({ name, verbose, answer: { status: 200, body: '-s' }, title: 'flow-title', stack: verbose }));
    assert.deepEqual(seen, [...expected('node-red'), ...expected('runnel')]);
  });

  it('--help: both list the same options and exit 0', async () => {
    const helps = await Promise.all([RED_JS, NODE_RED_BIN].map((bin) => runCli(['--help'], { bin, cwd: dir, timeoutMs: 60_000 })));
    const options = (text: string) => [...new Set(text.split('Options:')[1]?.match(/(?<=\s)--?[a-zA-Z?][a-zA-Z-]*/g))].sort();
    assert.deepEqual(helps.map((h) => h.code), [0, 0]);
    assert.deepEqual(options(helps[1]!.stdout), options(helps[0]!.stdout));
    assert.ok(options(helps[0]!.stdout).length >= 16, options(helps[0]!.stdout).join(' '));
  });

  it('a folder runnel export --out wrote runs every flow on Node-RED after npm install there', async () => {
    const userDir = path.join(dir, 'user');
    await mkdir(path.join(userDir, 'node_modules'), { recursive: true });
    const fixture = path.join(root, 'test', 'fixtures', 'modules', 'node-red-contrib-upper');
    await cp(fixture, path.join(dir, 'upper'), { recursive: true });
    await cp(fixture, path.join(userDir, 'node_modules', 'node-red-contrib-upper'), { recursive: true });
    await writeFile(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', private: true, dependencies: { 'node-red-contrib-upper': 'file:../upper' } }));
    const server = await startServer({}, userDir);
    try {
      await deploy(server, [
        { id: 'in', type: 'http in', z: 't1', url: '/up', method: 'get', x: 1, y: 1, wires: [['set']] },
        { id: 'set', type: 'change', z: 't1', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'quiet words', tot: 'str' }], x: 1, y: 1, wires: [['upper']] },
        { id: 'upper', type: 'upper-case', z: 't1', x: 1, y: 1, wires: [['out']] },
        { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
      ], { tab: 't1', api: 'v2' });
    } finally {
      await server.stop();
    }
    const out = path.join(dir, 'for-node-red');
    const exported = await runCli(['export', '--user-dir', userDir, '--out', out], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(exported.code, 0, exported.stdout + exported.stderr);
    assert.match(exported.stdout, /run npm install in \S+ \(its package\.json lists 1 node module: node-red-contrib-upper\)/);
    const npm = spawn('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: out, stdio: ['ignore', 'inherit', 'inherit'] });
    assert.equal((await once(npm, 'exit'))[0], 0, 'npm install in the exported folder');
    const red = await startNodeRed(RED_JS, ['-u', out], dir, 'up');
    try {
      assert.deepEqual(await get(`${red.base}up`), { status: 200, body: 'QUIET WORDS' });
      assert.doesNotMatch(red.output(), /missing types/i);
    } finally {
      await red.stop();
    }
  });
});
