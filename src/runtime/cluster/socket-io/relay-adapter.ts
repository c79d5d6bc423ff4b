import type { Server as HttpServer } from 'node:http';
import { createRequire } from 'node:module';
import type { Logger } from '../../../base/log.js';
import type { ClusterRelay, RelayMessage } from '../../../storage/contract.js';
import { onSocketIoLoad } from './load-hook.js';
import { forwardSessions, type Engine, type SessionOwners } from './session-forward.js';

/**
 * Socket.io servers that node modules attach to Runnel's HTTP server span the cluster: each gets
 * its sessions forwarded to the instance holding them (session-forward.ts) and
 * a socket.io adapter over the cluster relay, built on the `ClusterAdapterWithHeartbeat` of the
 * module's own socket.io, so what socket.io routes through its adapter — `io.emit`, rooms,
 * `socket.broadcast`, `serverSideEmit`, `fetchSockets` — reaches the clients of every instance.
 * A packet carrying binary data, or one over the relay's message size, reaches only this
 * instance's clients. A server given its own adapter (or connection state recovery, which needs
 * an adapter that stores packets) keeps it.
 */

const KIND = 'socket.io';

interface ClusterMessage {
  nsp?: unknown;
}
interface AdapterBase {
  readonly nsp: { readonly name: string };
  onMessage(message: ClusterMessage, offset?: string): void;
  close(): unknown;
}
type AdapterClass = new (nsp: unknown, opts: object) => AdapterBase;
interface IoServer {
  readonly engine: Engine;
  readonly opts?: { adapter?: unknown; connectionStateRecovery?: unknown };
  path(): string;
  adapter(adapter: AdapterClass): unknown;
}
type Attach = (this: IoServer, srv: unknown, ...rest: unknown[]) => unknown;

const spans = new WeakMap<HttpServer, Span>();
const patched = new WeakSet<object>();

/** Socket.io servers attached to `server` from now on span the instances through `relay`. */
export function spanSocketIo(server: HttpServer, relay: ClusterRelay, owners: SessionOwners, log: Logger): void {
  spans.set(server, new Span(relay, owners, log));
  onSocketIoLoad(patchServerClass);
}

/** Wraps `attach` of a socket.io copy's Server, which its constructor calls with the HTTP server. */
function patchServerClass(exports: unknown, filename: string): void {
  const Server = (exports as { Server?: { prototype: { attach?: Attach } } } | undefined)?.Server;
  const attach = Server?.prototype?.attach;
  if (!Server || typeof attach !== 'function' || patched.has(Server.prototype)) return;
  patched.add(Server.prototype);
  let base: AdapterClass | undefined;
  try {
    base = (createRequire(filename)('socket.io-adapter') as { ClusterAdapterWithHeartbeat?: AdapterClass }).ClusterAdapterWithHeartbeat;
  } catch {
    // Left undefined: install() says that this socket.io is too old.
  }
  Server.prototype.attach = function (srv, ...rest) {
    const result = attach.call(this, srv, ...rest);
    spans.get(srv as HttpServer)?.install(this, base);
    return result;
  };
}

class Span {
  private readonly adapters = new Map<string, Set<AdapterBase>>();
  private readonly warned = new Set<string>();

  constructor(private readonly relay: ClusterRelay, private readonly owners: SessionOwners, private readonly log: Logger) {
    relay.onMessage((m) => this.arrived(m));
  }

  install(io: IoServer, base: AdapterClass | undefined): void {
    const path = io.path();
    forwardSessions(io.engine, this.owners);
    if (io.opts?.adapter !== undefined || io.opts?.connectionStateRecovery) {
      this.log.info({ path }, 'socket.io server keeps its own adapter: its broadcasts do not cross instances through Runnel');
      return;
    }
    if (!base) {
      this.log.warn({ path }, 'socket.io before 4.7 has no cluster adapter: this server\'s broadcasts reach only this instance\'s clients');
      return;
    }
    const span = this;
    class RelayAdapter extends base {
      constructor(nsp: unknown) {
        super(nsp, {});
        span.add(path, this);
      }

      doPublish(message: ClusterMessage): Promise<string> {
        span.publish(path, message);
        // No offsets: connection state recovery is not offered over the relay.
        return Promise.resolve('');
      }

      doPublishResponse(_requester: string, response: ClusterMessage): Promise<void> {
        span.publish(path, response);
        return Promise.resolve();
      }

      override close(): unknown {
        span.remove(path, this);
        return super.close();
      }
    }
    io.adapter(RelayAdapter);
  }

  private add(path: string, adapter: AdapterBase): void {
    let set = this.adapters.get(path);
    if (!set) this.adapters.set(path, (set = new Set()));
    set.add(adapter);
  }

  private remove(path: string, adapter: AdapterBase): void {
    const set = this.adapters.get(path);
    set?.delete(adapter);
    if (set?.size === 0) this.adapters.delete(path);
  }

  private publish(path: string, message: ClusterMessage): void {
    const data = { p: path, m: message };
    const binary = hasBinary(message);
    const tooLarge = !binary && Buffer.byteLength(JSON.stringify(data)) > this.relay.maxMessageBytes;
    if (binary || tooLarge) {
      if (!this.warned.has(path)) this.log.warn({ path }, `socket.io: a packet ${tooLarge ? `over ${this.relay.maxMessageBytes} bytes` : 'with binary data'} reached only this instance's clients (said once)`);
      this.warned.add(path);
      return;
    }
    this.relay.publish(KIND, data);
  }

  private arrived({ kind, data }: RelayMessage): void {
    if (kind !== KIND || typeof data !== 'object' || data === null) return;
    const { p, m } = data as { p?: unknown; m?: ClusterMessage };
    if (typeof p !== 'string' || typeof m !== 'object' || m === null) return;
    for (const adapter of this.adapters.get(p) ?? []) {
      if (adapter.nsp.name !== m.nsp) continue;
      try {
        adapter.onMessage(m);
      } catch (err) {
        this.log.error({ err, path: p }, 'socket.io: a message from another instance failed');
      }
    }
  }
}

function hasBinary(value: unknown, depth = 0): boolean {
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return true;
  if (typeof value !== 'object' || value === null || depth > 32) return false;
  return Object.values(value).some((v) => hasBinary(v, depth + 1));
}
