/** The comparison peer, Node-RED, installed once from npm into an ignored folder. */
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';

export const PEER_VERSION = '4.1.15';

async function installedVersion(peerDir: string): Promise<string | undefined> {
  try {
    const pkg = JSON.parse(await readFile(path.join(peerDir, 'node_modules', 'node-red', 'package.json'), 'utf8'));
    return (pkg as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** An install that has held the lock this long died without releasing it. */
const STALE_LOCK_MS = 10 * 60_000;

/**
 * Test files run in parallel processes and each may need the peer: one installs while the others
 * wait on a lock directory (mkdir is atomic), since two npm installs into one folder break each other.
 */
async function withInstallLock<T>(peerDir: string, run: () => Promise<T>): Promise<T> {
  const lock = `${peerDir}.install-lock`;
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

export async function ensurePeer(peerDir: string, log: (line: string) => void): Promise<void> {
  if ((await installedVersion(peerDir)) === PEER_VERSION) return;
  await withInstallLock(peerDir, async () => {
    // Another process may have installed it while this one waited.
    if ((await installedVersion(peerDir)) === PEER_VERSION) return;
    log(`installing node-red@${PEER_VERSION} into ${peerDir} (once)`);
    const args = ['install', '--prefix', peerDir, `node-red@${PEER_VERSION}`, '--no-audit', '--no-fund'];
    // npm's own output goes to stderr so that stdout stays the results table.
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn('npm', args, { stdio: ['ignore', process.stderr, process.stderr] });
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0 || (await installedVersion(peerDir)) !== PEER_VERSION) {
      throw new Error(`npm ${args.join(' ')} failed (exit ${code})`);
    }
  });
}
