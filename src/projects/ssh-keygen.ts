import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RunnelError } from '../base/errors.js';

/** What POST /settings/user/keys asks for, as Node-RED's editor sends it. */
export interface KeyRequest {
  name?: unknown;
  comment?: unknown;
  /** The key's own passphrase; empty for none. */
  password?: unknown;
  size?: unknown;
}

interface KeyPair {
  privateKey: string;
  publicKey: string;
}

const MIN_BITS = 1024;
const MAX_BITS = 16384;

/**
 * An RSA key pair from Debian's ssh-keygen, as Node-RED makes them (`-t rsa -b size`, 2048 bits by
 * default), generated in a private temporary folder and read back: the private key never stays on
 * disk in clear (ssh-keys.ts encrypts it).
 */
export async function generateKeyPair(req: KeyRequest): Promise<KeyPair> {
  const size = req.size === undefined || req.size === '' ? 2048 : Number(req.size);
  if (!Number.isInteger(size)) throw new RunnelError('invalid_request', 'size is a number of bits');
  if (size < MIN_BITS) throw new RunnelError('key_length_too_short', `An SSH key has at least ${MIN_BITS} bits`);
  if (size > MAX_BITS) throw new RunnelError('key_length_too_long', `An SSH key has at most ${MAX_BITS} bits`);
  const comment = req.comment === undefined ? '' : req.comment;
  const password = req.password === undefined ? '' : req.password;
  if (typeof comment !== 'string' || typeof password !== 'string') throw new RunnelError('invalid_request', 'comment and password are strings');
  if (/[\0-\x1f\x7f]/.test(comment)) throw new RunnelError('invalid_request', 'The comment has no control characters');
  if (password !== '' && password.length < 5) throw new RunnelError('key_passphrase_too_short', 'An SSH key passphrase has at least 5 characters');
  const dir = await mkdtemp(path.join(tmpdir(), 'runnel-keygen-'));
  try {
    const file = path.join(dir, 'key');
    await run(['-q', '-t', 'rsa', '-b', String(size), '-C', comment, '-N', password, '-f', file]);
    return { privateKey: await readFile(file, 'utf8'), publicKey: await readFile(`${file}.pub`, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('ssh-keygen', args, { timeout: 120_000, env: { PATH: process.env.PATH, LC_ALL: 'C' } }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new RunnelError('ssh_keygen_not_found', 'Generating an SSH key needs ssh-keygen on PATH (Debian\'s openssh-client)'));
      reject(new RunnelError('invalid_request', `ssh-keygen failed: ${stderr.trim() || err.message}`));
    });
  });
}
