/** The comparison peer, Node-RED, installed once from npm into an ignored folder. */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
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

export async function ensurePeer(peerDir: string, log: (line: string) => void): Promise<void> {
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
}
