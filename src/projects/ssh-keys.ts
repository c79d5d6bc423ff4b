import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../base/errors.js';
import { CredentialCipher } from '../credentials/cipher.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import type { Storage, StoredCredentials } from '../storage/contract.js';
import { generateKeyPair, type KeyRequest } from './ssh-keygen.js';

/**
 * The editor users' SSH keys for git remotes (GET/POST/DELETE /settings/user/keys). Each user sees
 * only their own. Runnel keeps a key as `projects/.sshkeys/runnel/<user>/<name>.pub` in clear and
 * `<name>.key`, the private key encrypted (AES-256-GCM, see credentials/cipher.ts) with the
 * settings' credentialSecret, or, without one, with a key generated into .config.runtime.json.
 * Keys Node-RED made in the same user dir (`projects/.sshkeys/<user>_<name>` and `.pub`, in clear)
 * are listed and used as they are, so a Node-RED user dir keeps working; Node-RED does not see
 * Runnel's.
 */

/** Node-RED's name for the user when there is no adminAuth. */
const ANONYMOUS = '__default';
const KEY_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const GENERATED_SECRET = '_sshKeySecret';

type SecretSource = { credentialSecret: string | false | undefined; storage: Pick<Storage, 'getRuntimeConfig' | 'updateRuntimeConfig'> };

export class SshKeys {
  private readonly dir: string;

  constructor(userDir: string, private readonly secrets: SecretSource) {
    this.dir = path.join(userDir, 'projects', '.sshkeys');
  }

  async list(user: string | undefined): Promise<Array<{ name: string }>> {
    const names = new Set([...await this.ownNames(user), ...await this.nodeRedNames(user)]);
    return [...names].sort().map((name) => ({ name }));
  }

  /** The public key, in OpenSSH's one-line format; `not_found` (404) when the user has no such key. */
  async publicKey(user: string | undefined, name: string): Promise<string> {
    if ((await this.ownNames(user)).includes(name)) return readFile(this.ownPath(user, name, '.pub'), 'utf8');
    if ((await this.nodeRedNames(user)).includes(name)) return readFile(this.nodeRedPath(user, name, '.pub'), 'utf8');
    throw new RunnelError('not_found', `You have no SSH key named ${name}`);
  }

  async generate(user: string | undefined, req: KeyRequest): Promise<string> {
    const name = checkKeyName(req.name);
    if (await this.has(user, name)) throw new RunnelError('key_exists', `You already have an SSH key named ${name}`);
    const pair = await generateKeyPair(req);
    const doc = await (await this.cipher()).encrypt({ key: { privateKey: pair.privateKey } });
    await mkdir(this.ownDir(user), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.ownPath(user, name, '.key'), JSON.stringify(doc), { backup: false, mode: 0o600 });
    await writeFileAtomic(this.ownPath(user, name, '.pub'), pair.publicKey, { backup: false, mode: 0o644 });
    return name;
  }

  async remove(user: string | undefined, name: string): Promise<void> {
    if (!(await this.has(user, checkKeyName(name)))) throw new RunnelError('not_found', `You have no SSH key named ${name}`);
    const nodeRed = (await this.nodeRedNames(user)).includes(name) ? [this.nodeRedPath(user, name, ''), this.nodeRedPath(user, name, '.pub')] : [];
    for (const file of [this.ownPath(user, name, '.key'), this.ownPath(user, name, '.pub'), ...nodeRed]) {
      await rm(file, { force: true });
    }
  }

  /** The private key in clear, for ssh; only ever written to a private temporary file (ssh-session.ts). */
  async privateKey(user: string | undefined, name: unknown): Promise<string> {
    const key = checkKeyName(name);
    const own = this.ownPath(user, key, '.key');
    if (await isFile(own)) {
      try {
        const { map } = await (await this.cipher()).decrypt(JSON.parse(await readFile(own, 'utf8')) as StoredCredentials);
        return String(map.key?.privateKey);
      } catch {
        throw new RunnelError('ssh_key_unreadable', `The SSH key ${key} does not decrypt with the credentialSecret: generate it again`);
      }
    }
    if ((await this.nodeRedNames(user)).includes(key)) return readFile(this.nodeRedPath(user, key, ''), 'utf8');
    throw new RunnelError('not_found', `You have no SSH key named ${key}`);
  }

  private async has(user: string | undefined, name: string): Promise<boolean> {
    return (await this.list(user)).some((k) => k.name === name);
  }

  private ownDir(user: string | undefined): string {
    // One folder per user, its name the user name with every character that could mean a path escaped.
    return path.join(this.dir, 'runnel', encodeURIComponent(user ?? ANONYMOUS).replace(/[.*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
  }

  private ownPath(user: string | undefined, name: string, ext: string): string {
    return path.join(this.ownDir(user), `${name}${ext}`);
  }

  /**
   * Only for a name nodeRedNames listed: a user name may hold `/` (an automation token acts as
   * `token:<any name>`), and joined unchecked it would lead out of the keys' folder.
   */
  private nodeRedPath(user: string | undefined, name: string, ext: string): string {
    return path.join(this.dir, `${user ?? ANONYMOUS}_${name}${ext}`);
  }

  private async ownNames(user: string | undefined): Promise<string[]> {
    const files = await readdir(this.ownDir(user)).catch(() => [] as string[]);
    return files.filter((f) => f.endsWith('.key') && files.includes(`${f.slice(0, -4)}.pub`)).map((f) => f.slice(0, -4)).filter((n) => KEY_NAME.test(n));
  }

  /** Node-RED's pairs for this user: `<user>_<name>` with its `.pub`. */
  private async nodeRedNames(user: string | undefined): Promise<string[]> {
    const prefix = `${user ?? ANONYMOUS}_`;
    const files = await readdir(this.dir).catch(() => [] as string[]);
    const names = files.filter((f) => f.startsWith(prefix) && !f.endsWith('.pub') && files.includes(`${f}.pub`)).map((f) => f.slice(prefix.length));
    const found: string[] = [];
    for (const name of names) if (KEY_NAME.test(name) && await isFile(this.nodeRedPath(user, name, ''))) found.push(name);
    return found;
  }

  /** The credentialSecret when set (the generated key still opens keys made before it was), else the generated key. */
  private async cipher(): Promise<CredentialCipher> {
    const { credentialSecret, storage } = this.secrets;
    const chosen = typeof credentialSecret === 'string' && credentialSecret !== '' ? credentialSecret : undefined;
    const stored = (await storage.getRuntimeConfig())[GENERATED_SECRET];
    let generated = typeof stored === 'string' ? stored : undefined;
    if (chosen !== undefined) return new CredentialCipher(chosen, generated === undefined ? [] : [generated]);
    if (generated === undefined) {
      // Set only if still absent: another request may have generated one meanwhile.
      const fresh = randomBytes(32).toString('hex');
      generated = String((await storage.updateRuntimeConfig((c) => (typeof c[GENERATED_SECRET] === 'string' ? c : { ...c, [GENERATED_SECRET]: fresh })))[GENERATED_SECRET]);
    }
    return new CredentialCipher(generated, []);
  }
}

function checkKeyName(name: unknown): string {
  if (typeof name !== 'string' || !KEY_NAME.test(name)) throw new RunnelError('invalid_key_name', 'An SSH key name is 1 to 64 letters, digits, "-" or "_"');
  return name;
}

async function isFile(file: string): Promise<boolean> {
  return lstat(file).then((s) => s.isFile(), () => false);
}
