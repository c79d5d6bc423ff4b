import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeDir, tempDir } from './dirs.js';
import { withFreePort } from './ports.js';

/** Debian's haproxy (installed by .ci/run). */
const HAPROXY = process.env.RUNNEL_HAPROXY ?? '/usr/sbin/haproxy';

export interface TestBalancer {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  at(p: string): string;
  stop(): Promise<void>;
}

/**
 * HAProxy on a loopback port, round-robin over `backends` (base URLs) with no sticky sessions, as
 * README's cluster section configures it: every request and every websocket may land on any
 * instance. Instances failing GET /health are taken out within a second.
 */
export async function startHaproxy(backends: string[]): Promise<TestBalancer> {
  const dir = await tempDir('runnel-haproxy-');
  const file = path.join(dir, 'haproxy.cfg');
  const servers = backends.map((b, i) => `    server n${i} ${new URL(b).host} check inter 500ms fall 2 rise 1`);
  return withFreePort(async (port) => {
    await writeFile(file, [
      'global', '    maxconn 2000',
      'defaults', '    mode http', '    timeout connect 2s', '    timeout client 60s', '    timeout server 60s', '    timeout tunnel 1h',
      'frontend runnel', `    bind 127.0.0.1:${port}`, '    default_backend instances',
      'backend instances', '    balance roundrobin', '    option httpchk GET /health', ...servers, '',
    ].join('\n'));
    const child = spawn(HAPROXY, ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    let failed = false;
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', (err) => {
        failed = true;
        output += `${err.message}: install Debian's haproxy (apt-get install -y haproxy), as .ci/run does`;
        resolve();
      });
    });
    await listening(port, () => failed || child.exitCode !== null || child.signalCode !== null, () => output).catch((e: unknown) => {
      child.kill('SIGKILL');
      throw e;
    });
    const url = `http://127.0.0.1:${port}/`;
    return {
      url,
      at: (p: string) => new URL(p.replace(/^\//, ''), url).href,
      stop: async () => {
        child.kill('SIGTERM');
        await exited;
        await removeDir(dir);
      },
    };
  });
}

/** Resolves once the port accepts connections; throws with HAProxy's output if it exits first. */
async function listening(port: number, ended: () => boolean, output: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (ended()) throw new Error(`haproxy exited: ${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`haproxy did not listen on ${port}: ${output()}`);
}
