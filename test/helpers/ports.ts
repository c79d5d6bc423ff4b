import { once } from 'node:events';
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago, for peers and nodes that need a fixed port in their configuration. */
export async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}
