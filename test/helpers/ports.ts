import dgram from 'node:dgram';
import { once } from 'node:events';
import net from 'node:net';

/**
 * A TCP (or UDP) port on 127.0.0.1 that was free a moment ago. Only for what must be told its port
 * before it listens (mosquitto, PostgreSQL, a Runnel started with PORT, nodes whose configuration
 * names one), and only through `withFreePorts`: between this probe and the real listen another
 * process can take the port. Everything we start ourselves listens on port 0 and reports its port.
 */
async function freePort(protocol: 'tcp' | 'udp4'): Promise<number> {
  if (protocol === 'udp4') {
    const probe = dgram.createSocket('udp4').bind(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address();
    await new Promise<void>((r) => probe.close(r));
    return port;
  }
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

/** What a listener that lost the race says, in the words of Node.js, mosquitto, PostgreSQL, Node-RED and Runnel. */
export const ADDRESS_IN_USE = /EADDRINUSE|address already in use|port in use/i;

/**
 * Starts something on `count` ports that were free a moment ago. If another process took one in
 * between, `start` fails with an "address in use" error and runs again on new ports: the race of
 * probe-then-listen costs a retry, never the test. Any other error fails at once.
 */
export async function withFreePorts<T>(count: number, start: (ports: number[]) => Promise<T>, protocol: 'tcp' | 'udp4' = 'tcp'): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await freePort(protocol);
      if (!ports.includes(port)) ports.push(port);
    }
    try {
      return await start(ports);
    } catch (e) {
      if (attempt >= 5 || !ADDRESS_IN_USE.test(String((e as Error)?.message ?? e))) throw e;
    }
  }
}

/** `withFreePorts` for one port. */
export function withFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  return withFreePorts(1, ([port]) => start(port!));
}

/**
 * A port on 127.0.0.1 that refused connections a moment ago, for tests of a refused connection.
 * Nothing of ours listens on it; another process could start to within the test, which Linux's
 * random choice of ephemeral ports makes as unlikely as any two tests colliding.
 */
export function refusedPort(): Promise<number> {
  return freePort('tcp');
}
