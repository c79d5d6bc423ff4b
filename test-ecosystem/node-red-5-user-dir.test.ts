/**
 * Node-RED 5's runtime changes that show in the user dir rather than in a flow's answers, compared
 * with Node-RED 5.0.7 itself (started as the differential suite starts it): where a new credentials
 * file goes when the flows file is in a subfolder, and a node module written as an ES module (with
 * top-level await), which Node-RED 5 loads with import().
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import type { FlowNode } from '../bench/flows.js';
import type { SystemEnv } from '../bench/systems.js';
import { deployTo, startPeer, systemEnv, type Peer } from './differential/peers.js';
import { readyFlow } from './differential/harness.js';

const TAB = 'nr5-user-dir';

const node = (id: string, type: string, props: Record<string, unknown>, wires: string[] = []): FlowNode =>
  ({ id, type, z: TAB, name: '', x: 200, y: 80, ...props, wires: [wires] });

/** Files under `dir` whose name matches, by path relative to it. */
async function filesLike(dir: string, pattern: RegExp): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && pattern.test(e.name))
    .map((e) => `${e.parentPath}/${e.name}`.slice(dir.length + 1)).sort();
}

const ESM_MODULE = {
  'node_modules/diff-esm-nodes/package.json': JSON.stringify({ name: 'diff-esm-nodes', version: '1.0.0', type: 'module', 'node-red': { nodes: { twice: 'twice.js' } } }),
  'node_modules/diff-esm-nodes/twice.js': `const suffix = await Promise.resolve('!');
export default function (RED) {
  function Twice(config) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg, send, done) => {
      msg.payload = String(msg.payload).repeat(2) + suffix;
      send(msg);
      done();
    });
  }
  RED.nodes.registerType('diff-twice', Twice);
}
`,
};

describe('Node-RED 5.0.7 and Runnel treat the user dir alike', { timeout: 600_000 }, () => {
  let env: SystemEnv;
  const peers: Peer[] = [];

  before(async () => {
    env = await systemEnv((line) => console.log(line));
  }, { timeout: 600_000 });
  after(() => Promise.all(peers.map((p) => p.system.stop())));

  async function both(settings: Record<string, unknown>, userFiles: Record<string, string>, flows: FlowNode[]): Promise<Peer[]> {
    const caseEnv = { ...env, settings, userFiles };
    const started = await Promise.all([startPeer('node-red', caseEnv), startPeer('runnel', caseEnv)]);
    peers.push(...started);
    const all = [...readyFlow(), { id: TAB, type: 'tab', label: TAB, disabled: false, info: '', env: [] }, ...flows];
    await Promise.all(started.map((p) => deployTo(p, all)));
    return started;
  }

  it('a new credentials file goes next to a flows file in a subfolder', { timeout: 120_000 }, async () => {
    const withCredentials = { ...node('req', 'http request', { method: 'GET', ret: 'txt', url: 'http://127.0.0.1:1/', authType: 'basic', tls: '', paytoqs: 'ignore', persist: false, proxy: '', senderr: false, headers: [] }), credentials: { user: 'u', password: 'p' } };
    const [red, runnel] = await both({ flowFile: 'sub/flows.json' }, {}, [withCredentials]);
    const expected = await filesLike(red.system.userDir, /_cred\.json$/);
    assert.deepEqual(expected, ['sub/flows_cred.json'], 'Node-RED 5.0.7 itself');
    assert.deepEqual(await filesLike(runnel.system.userDir, /_cred\.json$/), expected);
  });

  it('a node module written as an ES module with top-level await loads from the user dir and runs', { timeout: 120_000 }, async () => {
    const flows = [
      node('in', 'http in', { url: '/diff/esm', method: 'get', upload: false, swaggerDoc: '' }, ['set']),
      node('set', 'change', { rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'ab', tot: 'str' }], action: '', property: '', from: '', to: '', reg: false }, ['twice']),
      node('twice', 'diff-twice', {}, ['res']),
      node('res', 'http response', { statusCode: '', headers: {} }),
    ];
    const answers = await Promise.all((await both({}, ESM_MODULE, flows)).map(async (p) => {
      const res = await fetch(`${p.system.base}diff/esm`, { signal: AbortSignal.timeout(5000) });
      return { status: res.status, body: await res.text() };
    }));
    assert.deepEqual(answers[0], { status: 200, body: 'abab!' }, 'Node-RED 5.0.7 itself');
    assert.deepEqual(answers[1], answers[0]);
  });
});
