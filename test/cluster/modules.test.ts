import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance, type TestCluster } from '../helpers/cluster.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';
import { copyFixture, npmPack } from '../registry/support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';

/**
 * One shared module list: what is installed, upgraded, disabled or removed on one instance
 * follows on the others, and what fails on one instance is reported there.
 */

/** A liveness bound for a loaded machine (npm runs on every instance), not a speed goal. */
const WITHIN_MS = 60_000;
const UPPER = 'node-red-contrib-upper';
const SHOUT = 'node-red-contrib-shout';
const ESM = '@runnel-test/esm-nodes';

/** A tab answering GET /<path> with the payload `hello` passed through a node of `type`. */
function throughNode(type: string, url: string) {
  return [
    { id: 't1', type: 'tab', label: 'Modules' },
    { id: 'in', type: 'http in', z: 't1', url, method: 'get', x: 1, y: 1, wires: [['set']] },
    { id: 'set', type: 'change', z: 't1', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'hello', tot: 'str' }], x: 1, y: 1, wires: [['n']] },
    { id: 'n', type, z: 't1', x: 1, y: 1, wires: [['out']] },
    { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
  ];
}

describe('cluster: one shared list of node modules', { timeout: 300_000 }, () => {
  let cluster: TestCluster;
  let nodes: ClusterInstance[];
  let work: string;
  let token: string;

  // node2 may not install the ESM fixture: its failure must show in the cluster view.
  const suite = clusterSuite('modules', 3, { externalModules: { palette: { allowNonRegistryDependencies: true } } }, {
    node2: { externalModules: { palette: { denyList: [ESM] } } },
  });
  before(async () => {
    ({ cluster, nodes } = suite);
    work = await tempDir();
    const r = await request(nodes[0]!.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
    });
    token = r.body.access_token as string;
  });
  after(() => removeDir(work));

  const moduleOn = async (n: ClusterInstance, name: string) => {
    const r = await request(n.at(`nodes/${name}`), { token });
    return r.status === 200 ? (r.body as { version: string; nodes: { enabled: boolean; loaded: boolean }[] }) : undefined;
  };
  /** The module once its sets are registered and their code has run (a module is listed before either). */
  const loadedOn = (n: ClusterInstance, name: string) => eventually(async () => {
    const mod = await moduleOn(n, name);
    return mod && mod.nodes.length > 0 && mod.nodes.every((s) => s.loaded) ? mod : undefined;
  }, WITHIN_MS);
  const clusterStates = async (name: string) => {
    const r = await request(nodes[0]!.at('cluster'), { token });
    assert.equal(r.status, 200, r.text);
    return Object.fromEntries((r.body.instances as { id: string; modules: Record<string, { state: string; version: string | null; error?: { code: string } }> }[])
      .map((i) => [i.id, i.modules[name]]));
  };
  const deploy = async (n: ClusterInstance, flows: unknown[]) => {
    const r = await request(n.at('flows'), { method: 'POST', token, headers: { 'Runtime-API-Version': 'v2' }, json: { flows } });
    assert.equal(r.status, 200, r.text);
  };
  const answers = async (n: ClusterInstance, url: string) => {
    const r = await request(n.at(url));
    return r.status === 200 ? r.text : undefined;
  };

  it('installs a module installed from a directory on one instance on every instance, which then run its nodes', async () => {
    const [a, b, c] = nodes as [ClusterInstance, ClusterInstance, ClusterInstance];
    const installed = await request(a.at('nodes'), { method: 'POST', token, json: { module: await copyFixture(UPPER, work) } });
    assert.equal(installed.status, 200, installed.text);
    for (const n of [b, c]) {
      assert.equal((await loadedOn(n, UPPER))!.version, '1.0.0', n.id);
      const sets = (await request(n.at('nodes'), { token })).body as { module: string; types: string[] }[];
      assert.deepEqual(sets.find((set) => set.module === UPPER)?.types, ['upper-case'], n.id);
    }
    await deploy(b, throughNode('upper-case', '/upper'));
    for (const n of nodes) assert.equal(await eventually(() => answers(n, 'upper'), WITHIN_MS), 'HELLO', n.id);
    const states = await eventually(async () => {
      const s = await clusterStates(UPPER);
      return Object.values(s).every((m) => m?.state === 'installed') ? s : undefined;
    }, WITHIN_MS);
    assert.deepEqual(Object.keys(states!).sort(), ['node0', 'node1', 'node2']);
  });

  it('upgrades everywhere a module upgraded on one instance', async () => {
    const [a, b, c] = nodes as [ClusterInstance, ClusterInstance, ClusterInstance];
    const dir = await copyFixture(UPPER, work, 'upper-1.1');
    const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { version: string };
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...manifest, version: '1.1.0' }));
    const upgraded = await request(b.at('nodes'), { method: 'POST', token, json: { module: dir } });
    assert.equal(upgraded.status, 200, upgraded.text);
    for (const n of [a, c]) await eventually(async () => (await moduleOn(n, UPPER))?.version === '1.1.0' && (await answers(n, 'upper')) === 'HELLO', WITHIN_MS);
  });

  it('installs an uploaded tarball everywhere from the bytes kept in the database', async () => {
    const [a, b, c] = nodes as [ClusterInstance, ClusterInstance, ClusterInstance];
    const packed = path.join(work, 'packed');
    await mkdir(packed);
    const tgz = await readFile(await npmPack(await copyFixture(SHOUT, work), packed));
    const form = new FormData();
    form.append('tarball', new Blob([tgz], { type: 'application/x-compressed-tar' }), 'module.tgz');
    const uploaded = await request(b.at('nodes'), { method: 'POST', token, body: form });
    assert.equal(uploaded.status, 200, uploaded.text);
    for (const n of [a, c]) await loadedOn(n, SHOUT);
    await deploy(c, throughNode('shout', '/shout'));
    for (const n of nodes) assert.equal(await eventually(() => answers(n, 'shout'), WITHIN_MS), 'HELLO!', n.id);
  });

  it('reports a module that cannot be installed on one instance in that instance\'s entry of the cluster view', async () => {
    const [a, b, c] = nodes as [ClusterInstance, ClusterInstance, ClusterInstance];
    const installed = await request(a.at('nodes'), { method: 'POST', token, json: { module: await copyFixture('esm-nodes', work) } });
    assert.equal(installed.status, 200, installed.text);
    await loadedOn(b, ESM);
    const states = await eventually(async () => {
      const s = await clusterStates(ESM);
      return s.node2?.state === 'failed' && s.node1?.state === 'installed' ? s : undefined;
    }, WITHIN_MS);
    assert.equal(states!.node2!.error!.code, 'install_not_allowed');
    assert.equal(states!.node2!.version, null);
    assert.equal(await moduleOn(c, ESM), undefined);
  });

  it('disables, enables and removes everywhere what one instance disabled, enabled or removed', async () => {
    const [a, b, c] = nodes as [ClusterInstance, ClusterInstance, ClusterInstance];
    await deploy(a, []);
    await eventually(async () => (await answers(c, 'upper')) === undefined && (await answers(b, 'upper')) === undefined, WITHIN_MS);
    const disabled = await request(c.at(`nodes/${UPPER}`), { method: 'PUT', token, json: { enabled: false } });
    assert.equal(disabled.status, 200, disabled.text);
    for (const n of [a, b]) await eventually(async () => (await moduleOn(n, UPPER))?.nodes[0]!.enabled === false, WITHIN_MS);
    const enabled = await request(b.at(`nodes/${UPPER}`), { method: 'PUT', token, json: { enabled: true } });
    assert.equal(enabled.status, 200, enabled.text);
    for (const n of [a, c]) await eventually(async () => (await moduleOn(n, UPPER))?.nodes[0]!.enabled === true, WITHIN_MS);

    for (const [name, from] of [[UPPER, b], [SHOUT, a]] as const) {
      const removed = await request(from.at(`nodes/${name}`), { method: 'DELETE', token });
      assert.equal(removed.status, 204, removed.text);
      for (const n of nodes) await eventually(async () => (await moduleOn(n, name)) === undefined, WITHIN_MS);
    }
    // A module that failed on one instance is removed from the list from there too.
    assert.equal((await request(c.at(`nodes/${ESM}`), { method: 'DELETE', token })).status, 204);
    for (const n of [a, b]) await eventually(async () => (await moduleOn(n, ESM)) === undefined, WITHIN_MS);
    await eventually(async () => Object.values(await clusterStates(ESM)).every((m) => m === undefined), WITHIN_MS);
  });

  it('keeps an instance\'s modules through its restart and installs on a new instance what the list has', async () => {
    const [a] = nodes as [ClusterInstance];
    const installed = await request(a.at('nodes'), { method: 'POST', token, json: { module: await copyFixture(UPPER, work, 'upper-again') } });
    assert.equal(installed.status, 200, installed.text);
    a.process.child.kill('SIGTERM');
    await a.process.exited;
    const again = await cluster.add(a.id);
    assert.equal((await moduleOn(again, UPPER))?.nodes[0]!.loaded, true);
    await loadedOn(await cluster.add('node3'), UPPER);
  });
});
