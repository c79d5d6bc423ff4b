import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Debian's OpenSSH server on 127.0.0.1, for git over SSH. sshd cannot listen on port 0 and report
 * the port, so the test listens itself: a node server on port 0 (the kernel reserves the port, no
 * probe-then-release race) hands each connection to `sshd -i` (inetd mode: one sshd per
 * connection, talking over the socket). Only key authentication, only for the account the test
 * runs as (root in CI, a normal user elsewhere): StrictModes is off because the keys and
 * repositories live in the test's temporary folders.
 */
export interface SshServer {
  port: number;
  /** The account git logs in as. */
  user: string;
  /** `ssh://user@127.0.0.1:port/abs/path` for a repository path. */
  url(repoPath: string): string;
  /** The host key as a known_hosts line for this server. */
  knownHostsLine: string;
  /** Another host key's line for the same address: what a changed host key looks like. */
  otherHostKeyLine: string;
  /** Lets a public key (one OpenSSH line) log in. */
  authorize(publicKey: string): Promise<void>;
  /** What sshd logged (-e), for a failing test's message. */
  log: string[];
  close(): Promise<void>;
}

const SSHD = '/usr/sbin/sshd';

export async function startSshd(dir: string): Promise<SshServer> {
  const user = os.userInfo().username;
  const keygen = (file: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', file]);
  keygen(path.join(dir, 'host_key'));
  keygen(path.join(dir, 'other_host_key'));
  const authorized = path.join(dir, 'authorized_keys');
  writeFileSync(authorized, '');
  // As root sshd separates privileges and wants Debian's empty chroot folder, which the package's service creates at boot.
  if (process.getuid?.() === 0 && !statSync('/run/sshd', { throwIfNoEntry: false })) mkdirSync('/run/sshd', { mode: 0o755 });
  const config = path.join(dir, 'sshd_config');
  writeFileSync(config, [
    `HostKey ${path.join(dir, 'host_key')}`,
    `AuthorizedKeysFile ${authorized}`,
    `AllowUsers ${user}`,
    'StrictModes no',
    'UsePAM no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin prohibit-password',
    'PidFile none',
    'LogLevel VERBOSE',
    '',
  ].join('\n'));
  const log: string[] = [];
  const children = new Set<ReturnType<typeof spawn>>();
  const server = net.createServer({ pauseOnConnect: true }, (socket) => {
    const child = spawn(SSHD, ['-i', '-e', '-f', config], { stdio: [socket, socket, 'pipe'] });
    children.add(child);
    child.stderr!.on('data', (d: Buffer) => log.push(d.toString()));
    child.on('exit', () => {
      children.delete(child);
      socket.destroy();
    });
    child.on('error', (err) => log.push(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const line = (file: string) => `[127.0.0.1]:${port} ${readFileSync(file, 'utf8').trim()}\n`;
  return {
    port,
    user,
    url: (repoPath) => `ssh://${user}@127.0.0.1:${port}${repoPath}`,
    knownHostsLine: line(path.join(dir, 'host_key.pub')),
    otherHostKeyLine: line(path.join(dir, 'other_host_key.pub')),
    authorize: (publicKey) => appendFile(authorized, publicKey.endsWith('\n') ? publicKey : `${publicKey}\n`),
    log,
    close: async () => {
      for (const child of children) child.kill();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
