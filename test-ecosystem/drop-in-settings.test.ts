/**
 * settings.js extension points side by side: Node-RED 4.1.15's `red.js` and Runnel's
 * `bin/node-red.js` each start a copy of the same user dir (its settings.js, flows and modules)
 * with the same command line, are asked the same things, and must answer alike. Modules come from
 * a loopback registry (npm_config_registry), so nothing leaves 127.0.0.1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ensurePeer } from '../bench/peer.js';
import { removeDir, tempDir } from '../test/helpers/dirs.js';
import { NODE_RED_BIN } from '../test/helpers/process.js';
import { packageRegistry, type LoopbackRegistry } from '../test/helpers/registry.js';
import { FIXTURES, npmPack } from '../test/registry/support.js';
import { eventually } from '../test/helpers/server.js';
import { PEER_DIR, RED_JS, startNodeRed, stopNodeReds, type NodeRedProcess } from './node-red-process.js';

const UPPER = 'node-red-contrib-upper';
const BOTH = [['node-red', RED_JS], ['runnel', NODE_RED_BIN]] as const;

/** Flow nodes at a place on the tab: Node-RED takes a node without `x`/`y` for a config node. */
const placed = (flows: Record<string, unknown>[]) => flows.map((n) => (n.type === 'tab' ? n : { x: 100, y: 100, ...n }));

/** http in `/up` → change (payload "quiet words") → upper-case → http response. */
const UPPER_FLOWS = placed([
  { id: 't', type: 'tab', label: 'up' },
  { id: 'in', type: 'http in', z: 't', url: '/up', method: 'get', wires: [['set']] },
  { id: 'set', type: 'change', z: 't', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'quiet words', tot: 'str' }], wires: [['upper']] },
  { id: 'upper', type: 'upper-case', z: 't', wires: [['out']] },
  { id: 'out', type: 'http response', z: 't', wires: [] },
]);

async function call(url: string, init: { method?: string; json?: unknown } = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { accept: 'application/json', ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // A text answer stays text.
  }
  return { status: res.status, body };
}

/**
 * `module.exports = {flowFile, ...settings, ...code}`: `code` holds properties written as JavaScript
 * (handlers, require). The flows file is named: without it Node-RED names one after the host.
 */
function settingsJs(settings: Record<string, unknown>, code: Record<string, string> = {}): string {
  const parts = [...Object.entries({ flowFile: 'flows.json', ...settings }).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`), ...Object.entries(code).map(([k, v]) => `${JSON.stringify(k)}: ${v}`)];
  return `module.exports = {\n  ${parts.join(',\n  ')}\n};\n`;
}

describe('settings.js extension points: Node-RED 4.1.15 and Runnel run the same user dir alike', { timeout: 1_200_000 }, () => {
  let dir: string;
  let registry: LoopbackRegistry;

  /**
   * For each of Node-RED and Runnel: a fresh copy of the user dir `make` writes, started with
   * `node-red -u DIR` (until `route` answers), observed by `observe`. Returns both observations.
   */
  async function sideBySide<T>(name: string, make: (userDir: string) => Promise<void>, route: string, observe: (run: NodeRedProcess, userDir: string) => Promise<T>): Promise<T[]> {
    const seen: T[] = [];
    for (const [who, bin] of BOTH) {
      const userDir = path.join(dir, `${name}-${who}`);
      await mkdir(userDir, { recursive: true });
      await make(userDir);
      // A fresh npm cache each: what one side's install cached must not answer for the other's.
      const env = { npm_config_registry: registry.url, npm_config_cache: path.join(dir, `${name}-${who}-npm-cache`) };
      const run = await startNodeRed(bin, ['-u', userDir], userDir, route, env);
      try {
        seen.push(await observe(run, userDir).catch((e: Error) => {
          throw new Error(`${who}: ${e.message}\n${run.output()}`);
        }));
      } finally {
        await run.stop();
      }
    }
    return seen;
  }

  before(async () => {
    await ensurePeer(PEER_DIR, (line) => console.log(line));
    dir = await tempDir('runnel-drop-in-settings-');
    // The modules the lists refuse are in the registry too: Node-RED asks it before its lists.
    const pack = async (name: string, version: string) => {
      const src = path.join(dir, 'pack', name, version, 'src');
      await cp(path.join(FIXTURES, UPPER), src, { recursive: true });
      const pkg = JSON.parse(await readFile(path.join(src, 'package.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(path.join(src, 'package.json'), JSON.stringify({ ...pkg, name, version }));
      return readFile(await npmPack(src, path.join(dir, 'pack', name, version)));
    };
    registry = await packageRegistry({
      [UPPER]: { '1.0.0': await pack(UPPER, '1.0.0'), '1.1.0': await pack(UPPER, '1.1.0') },
      'left-pad': { '1.0.0': await pack('left-pad', '1.0.0') },
      'node-red-contrib-bad': { '1.0.0': await pack('node-red-contrib-bad', '1.0.0') },
    });
  }, { timeout: 600_000 });

  after(async () => {
    await stopNodeReds();
    await new Promise((resolve) => registry?.server.close(resolve));
    await removeDir(dir);
  });

  /** The upper module in node_modules and in package.json, as an install leaves them. */
  async function withUpper(userDir: string): Promise<void> {
    await cp(path.join(FIXTURES, UPPER), path.join(userDir, 'node_modules', UPPER), { recursive: true });
    await writeFile(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', version: '0.0.1', private: true, dependencies: { [UPPER]: '~1.0.0' } }));
  }

  it('externalModules.autoInstall: a module .config.nodes.json lists and node_modules lacks is installed, and its flow runs', async () => {
    // The container pattern: a user dir Node-RED ran with the module, shipped without node_modules.
    const template = path.join(dir, 'auto-template');
    await mkdir(template);
    await withUpper(template);
    const first = await startNodeRed(RED_JS, ['-u', template], template, 'nodes');
    await first.stop();
    await rm(path.join(template, 'node_modules'), { recursive: true });
    const seen = await sideBySide('auto', async (userDir) => {
      await cp(template, userDir, { recursive: true });
      await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(UPPER_FLOWS));
      await writeFile(path.join(userDir, 'settings.js'), settingsJs({ externalModules: { autoInstall: true, autoInstallRetry: 1 } }));
    }, 'nodes', async (run, userDir) => {
      const answer = await eventually(async () => {
        const r = await call(`${run.base}up`);
        return r.status === 200 ? r : undefined;
      }, 180_000, 250);
      const pkg = JSON.parse(await readFile(path.join(userDir, 'package.json'), 'utf8')) as { dependencies: unknown };
      const installed = JSON.parse(await readFile(path.join(userDir, 'node_modules', UPPER, 'package.json'), 'utf8')) as { version: string };
      return { answer, dependencies: pkg.dependencies, installed: installed.version };
    });
    assert.deepEqual(seen[1], seen[0]);
    assert.deepEqual(seen[0], { answer: { status: 200, body: 'QUIET WORDS' }, dependencies: { [UPPER]: '~1.0.0' }, installed: '1.0.0' });
  });

  for (const [name, settings] of [
    ['nodesExcludes', { nodesExcludes: ['90-exec.js', 'rbe.js', UPPER] }],
    ['nodesIncludes', { nodesIncludes: ['20-inject.js', '10-function.js', '90-exec.js', UPPER], nodesExcludes: ['90-exec.js'] }],
  ] as const) {
    it(`${name}: the same node sets load`, async () => {
      const seen = await sideBySide(name, async (userDir) => {
        await withUpper(userDir);
        await writeFile(path.join(userDir, 'settings.js'), settingsJs(settings));
      }, 'nodes', async (run) => {
        const sets = (await call(`${run.base}nodes`)).body as { id: string }[];
        // node-red/queue is Runnel's own: no Node-RED file name for either list to give. Node-RED also
        // loads the modules in every node_modules above its own install (here the repository's, with
        // its devDependencies): only the core sets and the user dir's module are the lists' to decide.
        return sets.map((s) => s.id).filter((id) => id !== 'node-red/queue' && (id.startsWith('node-red/') || id.startsWith(`${UPPER}/`))).sort();
      });
      assert.deepEqual(seen[1], seen[0]);
      assert.ok(!seen[0]!.includes('node-red/exec') && seen[0]!.includes('node-red/inject'), seen[0]!.join(' '));
    });
  }

  it('externalModules.palette allow/deny install and update lists: the same answers and the same module installed', async () => {
    const palette = { allowInstall: true, allowUpdate: true, allowList: ['node-red-contrib-*'], denyList: ['node-red-contrib-bad', 'left-*'], denyUpdateList: [UPPER] };
    const seen = await sideBySide('lists', async (userDir) => {
      await writeFile(path.join(userDir, 'settings.js'), settingsJs({ externalModules: { palette } }));
    }, 'nodes', async (run) => {
      const answers: unknown[] = [];
      for (const json of [{ module: 'left-pad' }, { module: 'node-red-contrib-bad' }, { module: UPPER, version: '1.0.0' }, { module: UPPER, version: '1.1.0' }]) {
        const r = await call(`${run.base}nodes`, { method: 'POST', json });
        const body = r.body as { code?: string; name?: string; version?: string };
        // Node-RED answers a refusal 400, Runnel 403 (README's error table): the code is what both send.
        answers.push([json, r.status === 200 ? { name: body.name, version: body.version } : [Math.floor(r.status / 100), body.code]]);
      }
      const installed = (await call(`${run.base}nodes/${UPPER}`)).body as { version?: string };
      return { answers, installed: installed.version };
    });
    assert.deepEqual(seen[1], seen[0]);
    assert.deepEqual(seen[0], {
      answers: [
        [{ module: 'left-pad' }, [4, 'install_not_allowed']],
        [{ module: 'node-red-contrib-bad' }, [4, 'install_not_allowed']],
        [{ module: UPPER, version: '1.0.0' }, { name: UPPER, version: '1.0.0' }],
        [{ module: UPPER, version: '1.1.0' }, [4, 'update_not_allowed']],
      ],
      installed: '1.0.0',
    });
  });

  it('storageModule: flows load from the custom module and a deploy saves through it', async () => {
    const stored = placed([
      { id: 't', type: 'tab', label: 'stored' },
      { id: 'in', type: 'http in', z: 't', url: '/stored', method: 'get', wires: [['say']] },
      { id: 'say', type: 'change', z: 't', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'from the module', tot: 'str' }], wires: [['out']] },
      { id: 'out', type: 'http response', z: 't', wires: [] },
    ]);
    const store = `const fs = require('fs');
const path = require('path');
const called = (name) => fs.appendFileSync(path.join(__dirname, 'calls.log'), name + '\\n');
let flows = JSON.parse(fs.readFileSync(path.join(__dirname, 'stored.json'), 'utf8'));
module.exports = {
  init: async () => called('init'),
  getFlows: async () => { called('getFlows'); return flows; },
  saveFlows: async (f) => { called('saveFlows'); flows = f; fs.writeFileSync(path.join(__dirname, 'saved.json'), JSON.stringify(f)); },
  getCredentials: async () => { called('getCredentials'); return {}; },
  saveCredentials: async () => called('saveCredentials'),
  getSettings: async () => { called('getSettings'); return {}; },
  saveSettings: async () => called('saveSettings'),
  getSessions: async () => { called('getSessions'); return {}; },
  saveSessions: async () => called('saveSessions'),
  getLibraryEntry: async () => { called('getLibraryEntry'); return []; },
  saveLibraryEntry: async () => called('saveLibraryEntry'),
};
`;
    const seen = await sideBySide('storage', async (userDir) => {
      await writeFile(path.join(userDir, 'store.js'), store);
      await writeFile(path.join(userDir, 'stored.json'), JSON.stringify(stored));
      await writeFile(path.join(userDir, 'settings.js'), settingsJs({}, { storageModule: "require('./store.js')" }));
    }, 'stored', async (run, userDir) => {
      const before = await call(`${run.base}stored`);
      const deployed = stored.map((n) => (n.id === 'say' ? { ...n, rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'deployed', tot: 'str' }] } : n));
      const deploy = await call(`${run.base}flows`, { method: 'POST', json: deployed });
      const afterDeploy = await eventually(async () => {
        const r = await call(`${run.base}stored`);
        return r.body === 'deployed' ? r : undefined;
      });
      const saved = JSON.parse(await readFile(path.join(userDir, 'saved.json'), 'utf8')) as { id: string }[];
      const calls = (await readFile(path.join(userDir, 'calls.log'), 'utf8')).trim().split('\n');
      return { before, deploy: deploy.status, after: afterDeploy, saved: saved.map((n) => n.id), calls: [...new Set(calls)].filter((c) => /Flows|init/.test(c)) };
    });
    assert.deepEqual(seen[1], seen[0]);
    assert.deepEqual(seen[0]!.before, { status: 200, body: 'from the module' });
  });

  it('logging.<name>.handler: the same log objects at the same levels, with level and audit honoured', async () => {
    const flows = placed([
      { id: 't', type: 'tab', label: 'talk' },
      { id: 'in', type: 'http in', z: 't', url: '/talk', method: 'get', wires: [['talker']] },
      { id: 'talker', type: 'function', z: 't', name: 'talker', outputs: 1, wires: [['out']], func: 'node.warn("careful"); node.error("bad"); node.log("quiet"); node.debug("deep"); return msg;' },
      { id: 'out', type: 'http response', z: 't', wires: [] },
    ]);
    const handler = `(settings) => (msg) => require('fs').appendFileSync(require('path').join(__dirname, 'log.jsonl'), JSON.stringify(msg) + '\\n')`;
    const seen = await sideBySide('logging', async (userDir) => {
      await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(flows));
      await writeFile(path.join(userDir, 'settings.js'), `module.exports = { flowFile: 'flows.json', logging: { console: { level: 'info' }, file: { level: 'warn', metrics: false, audit: true, handler: ${handler} } } };\n`);
    }, 'flows', async (run, userDir) => {
      // Node-RED answers its admin API before its flows start: until then /talk is a 404 that runs nothing.
      await eventually(async () => (await call(`${run.base}talk`)).status === 200);
      await call(`${run.base}flows`, { method: 'POST', json: flows });
      const read = async () => (await readFile(path.join(userDir, 'log.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      await eventually(async () => (await read()).some((r) => r.event === 'flows.set'));
      const records = await read();
      const node = records.filter((r) => r.type === 'function').map(({ timestamp: _, ...r }) => r);
      // Node-RED's audit keys Runnel's entry carries too (Runnel adds reqId, rev and msg; Node-RED's request path it lacks).
      const audit = records.filter((r) => r.event === 'flows.set').map((r) => ({ event: r.event, type: r.type, level: r.level, ip: r.ip }));
      const levels = [...new Set(records.map((r) => r.level as number))].filter((l) => l > 30 && l !== 98);
      return { node, audit, levelsAboveWarn: levels };
    });
    assert.deepEqual(seen[1], seen[0]);
    assert.deepEqual(seen[0]!.node.map((r) => [r.level, r.msg]), [[30, 'careful'], [20, 'bad']]);
  });
});
