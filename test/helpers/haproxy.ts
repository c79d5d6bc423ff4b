import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { removeDir, tempDir } from './dirs.js';

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
 * instance. Instances failing GET /health are taken out within a second, at once when they refuse a connection.
 *
 * HAProxy cannot report a port it picked, so this process listens on port 0 and hands HAProxy the
 * listening socket (`bind fd@3`): no port is probed and reused, and connections made before HAProxy
 * accepts wait in the socket's backlog. Resolves once a request through it has been answered.
 */
/**
 * As README's example: checked every 500 ms, out after 2 failures; a connection the instance
 * refuses takes it out at once (`observe layer4`), and is tried again on another instance
 * (`retries`, `option redispatch 1`), so a page reconnecting right after a crash does not wait for
 * the checks; the connections an instance still held when it was taken out are closed.
 */
const SERVER_OPTIONS = 'check inter 500ms fall 2 rise 1 observe layer4 error-limit 1 on-error mark-down on-marked-down shutdown-sessions';

export async function startHaproxy(backends: string[]): Promise<TestBalancer> {
  const dir = await tempDir('runnel-haproxy-');
  const file = path.join(dir, 'haproxy.cfg');
  const servers = backends.map((b, i) => `    server n${i} ${new URL(b).host} ${SERVER_OPTIONS}`);
  await writeFile(file, [
    'global', '    maxconn 2000',
    'defaults', '    mode http', '    timeout connect 2s', '    timeout client 60s', '    timeout server 60s', '    timeout tunnel 1h',
    '    retries 3', '    option redispatch 1',
    'frontend runnel', '    bind fd@3', '    default_backend instances',
    'backend instances', '    balance roundrobin', '    option httpchk GET /health', ...servers, '',
  ].join('\n'));
  const listener = net.createServer().listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const url = `http://127.0.0.1:${(listener.address() as net.AddressInfo).port}/`;
  // The descriptor is duplicated into HAProxy; this process's copy is closed once it is spawned.
  const fd = (listener as unknown as { _handle: { fd: number } })._handle.fd;
  const child = spawn(HAPROXY, ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe', fd] });
  listener.close();
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const exited = new Promise<Error>((resolve) => {
    child.once('exit', (code, signal) => resolve(new Error(`haproxy exited (${code ?? signal}): ${output}`)));
    child.once('error', (err) => resolve(new Error(`${err.message}: install Debian's haproxy (apt-get install -y haproxy), as .ci/run does`)));
  });
  const answered = fetch(new URL('health', url)).then((r) => r.arrayBuffer()).then(
    () => undefined,
    (e: Error) => new Error(`no answer through haproxy (${e.message}): ${output}`),
  );
  const failed = await Promise.race([answered, exited]);
  if (failed) {
    child.kill('SIGKILL');
    throw failed;
  }
  return {
    url,
    at: (p: string) => new URL(p.replace(/^\//, ''), url).href,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      await removeDir(dir);
    },
  };
}
