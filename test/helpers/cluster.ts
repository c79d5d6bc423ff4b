import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before } from 'node:test';
import { withFreePorts } from './ports.js';
import { killRunnels, spawnRunnel, type RunnelProcess } from './process.js';
import { startPostgres, type TestPostgres } from './postgres.js';
import { adminAuth } from './users.js';
import { removeDir, tempDir } from './dirs.js';

/**
 * Several Runnel processes sharing one PostgreSQL schema, each with its own user dir, as an
 * operator would run a cluster. Real processes: instances must not share memory, and some tests
 * SIGKILL one.
 */

export interface ClusterInstance {
  id: string;
  url: string;
  at(p: string): string;
  process: RunnelProcess;
  /** Its user dir. */
  dir: string;
}

export interface TestCluster {
  instances: ClusterInstance[];
  /** Starts one more instance (or restarts a stopped id) on the same schema. */
  add(id?: string): Promise<ClusterInstance>;
  /** SIGTERMs every instance still running and removes the user dirs. */
  stop(): Promise<void>;
}

/**
 * `extra`: settings of every instance; `perInstance`: settings of one instance by id (`node0`, ...);
 * `envFor`: environment variables of one instance's process by id.
 */
export async function startCluster(
  url: string, schema: string, size: number, extra: Record<string, unknown> = {}, perInstance: Record<string, Record<string, unknown>> = {},
  envFor: Record<string, Record<string, string>> = {},
): Promise<TestCluster> {
  const root = await tempDir('runnel-cluster-');
  const instances: ClusterInstance[] = [];
  let next = 0;
  const add = async (id = `node${next++}`) => {
    const dir = path.join(root, id);
    await mkdir(dir, { recursive: true });
    const process = await spawnRunnel(dir, {
      storage: { type: 'postgres', url, schema },
      instanceId: id,
      credentialSecret: 'cluster-secret',
      adminAuth: adminAuth(),
      ...extra,
      ...perInstance[id],
    }, [], envFor[id]);
    const instance = { id, url: process.url, at: (p: string) => new URL(p.replace(/^\//, ''), process.url).href, process, dir };
    instances.push(instance);
    return instance;
  };
  await Promise.all(Array.from({ length: size }, () => add()));
  instances.sort((a, b) => a.id.localeCompare(b.id));
  return {
    instances,
    add,
    stop: async () => {
      await Promise.all(instances.map(async (i) => {
        if (i.process.child.exitCode === null && i.process.child.signalCode === null) i.process.child.kill('SIGTERM');
        await i.process.exited;
      }));
      await removeDir(root);
    },
  };
}

/**
 * A cluster whose instances each know their own URL (`instanceUrl`), as socket.io sessions behind a
 * balancer need (an instance passes a session's requests on to the one holding it), so each
 * instance's port is chosen before it starts.
 */
export function startAddressedCluster(url: string, schema: string, size: number, extra: Record<string, unknown> = {}): Promise<TestCluster> {
  return withFreePorts(size, (ports) => startCluster(url, schema, size, extra,
    Object.fromEntries(ports.map((port, i) => [`node${i}`, { uiPort: port, instanceUrl: `http://127.0.0.1:${port}/` }]))));
}

export interface ClusterSuite {
  readonly pg: TestPostgres;
  readonly cluster: TestCluster;
  readonly nodes: ClusterInstance[];
}

/**
 * The common set-up of a cluster test file: a throwaway PostgreSQL and `size` instances on one
 * schema before the tests, everything stopped after them (killed if a stop fails, so no process
 * outlives the file). Call it inside `describe`, before the file's own hooks.
 */
export function clusterSuite(schema: string, size: number, extra: Record<string, unknown> = {}, perInstance: Record<string, Record<string, unknown>> = {}): ClusterSuite {
  let pg: TestPostgres | undefined;
  let cluster: TestCluster | undefined;
  before(async () => {
    pg = await startPostgres();
    cluster = await startCluster(pg.url, schema, size, extra, perInstance);
  });
  after(async () => {
    await cluster?.stop().catch(() => undefined);
    // Also when the set-up failed half-way (no cluster to stop): no instance may outlive the file.
    killRunnels();
    await pg?.dispose();
  });
  return {
    get pg() {
      return pg!;
    },
    get cluster() {
      return cluster!;
    },
    get nodes() {
      return cluster!.instances;
    },
  };
}

/**
 * Environment for a process whose wall clock (Date) runs `skewMs` ahead (behind when negative) of
 * the machine's: instances of a cluster need not agree on the time. Monotonic clocks are untouched.
 */
export function skewedClock(skewMs: number): Record<string, string> {
  const code = `const skew = ${skewMs}; const Real = Date; globalThis.Date = class extends Real {
    constructor(...a) { super(...(a.length === 0 ? [Real.now() + skew] : a)); }
    static now() { return Real.now() + skew; }
  };`;
  return { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(code)}` };
}
