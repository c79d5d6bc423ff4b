import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';

/**
 * What one git run needs to reach an SSH remote with a user's key: the private key in a private
 * temporary folder (removed after the run), its passphrase handed to ssh through an askpass script
 * that reads it from the environment (never an argument), and host keys checked strictly against
 * `projects/.sshkeys/known_hosts` and the server account's ~/.ssh/known_hosts: an unknown or
 * changed host key fails (`git_host_key_verification_failed`), nothing is added on the way, and ssh
 * never prompts.
 */
export interface GitSession {
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function sshSession(privateKey: string, passphrase: string | undefined, knownHostsFiles: string[]): Promise<GitSession> {
  const dir = await mkdtemp(path.join(tmpdir(), 'runnel-ssh-'));
  try {
    const key = path.join(dir, 'key');
    await writeFile(key, privateKey.endsWith('\n') ? privateKey : `${privateKey}\n`, { mode: 0o600 });
    const knownHosts = path.join(dir, 'known_hosts');
    const known = await Promise.all(knownHostsFiles.map((f) => readFile(f, 'utf8').catch(() => '')));
    await writeFile(knownHosts, known.map((text) => (text.endsWith('\n') || text === '' ? text : `${text}\n`)).join(''), { mode: 0o600 });
    const askpass = path.join(dir, 'askpass');
    await writeFile(askpass, '#!/bin/sh\nprintf \'%s\\n\' "$RUNNEL_SSH_PASSPHRASE"\n', { mode: 0o700 });
    const withPassphrase = passphrase !== undefined && passphrase !== '';
    const command = [
      'ssh', '-F', '/dev/null', '-i', quote(key), '-o', 'IdentitiesOnly=yes', '-o', 'IdentityAgent=none',
      '-o', 'StrictHostKeyChecking=yes', '-o', quote(`UserKnownHostsFile=${knownHosts}`), '-o', 'ConnectTimeout=30',
      '-o', `BatchMode=${withPassphrase ? 'no' : 'yes'}`,
    ].join(' ');
    return {
      env: {
        GIT_SSH_COMMAND: command,
        GIT_SSH_VARIANT: 'ssh',
        ...(withPassphrase ? { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', RUNNEL_SSH_PASSPHRASE: passphrase } : {}),
      },
      close: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The known hosts a session trusts: the user dir's, then the server account's own. */
export function knownHostsFiles(userDir: string): string[] {
  return [path.join(userDir, 'projects', '.sshkeys', 'known_hosts'), path.join(homedir(), '.ssh', 'known_hosts')];
}

/** GIT_SSH_COMMAND goes through a shell: single quotes keep a path with spaces or quotes one word. */
function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
