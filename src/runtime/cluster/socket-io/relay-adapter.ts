import type { Server as HttpServer } from 'node:http';
import { createRequire } from 'node:module';
import type { Logger } from '../../../base/log.js';
import type { ClusterRelay, RelayMessage } from '../../../storage/contract.js';
import { onSocketIoLoad } from './load-hook.js';
import { RemoteClients, type Namespace, type Presence } from './remote-clients.js';
import { forwardSessions, type Engine, type SessionOwners } from './session-forward.js';

/**
 * Socket.io servers that node modules attach to Runnel's HTTP server span the cluster: each gets
 * its sessions forwarded to the instance holding them (session-forward.ts) and
 * a socket.io adapter over the cluster relay, built on the `ClusterAdapterWithHeartbeat` of the
 * module's own socket.io, so what socket.io routes through its adapter — `io.emit`, rooms,
 * `socket.broadcast`, `serverSideEmit`, `fetchSockets` — reaches the clients of every instance,
 * and the clients of the other instances connect here too (remote-clients.ts), so what an app
 * sends to each socket it holds reaches them as well.
 * A packet carrying binary data, or one over the relay's message size, reaches only this
 * instance's clients. A server given its own adapter (or connection state recovery, which needs
 * an adapter that stores packets) keeps it.
 */

const KIND = 'socket.io';
/** ClusterAdapterWithHeartbeat's defaults, said here because remote clients are dropped on the same timeout. */
const HEARTBEAT = { heartbeatInterval: 5000, heartbeatTimeout: 10_000 };

interface ClusterMessage {
  nsp?: unknown;
  uid?: unknown;
}
interface AdapterBase {
  readonly nsp: Namespace;
  readonly uid: string;
  init(): unknown;
  addAll(id: string, rooms: Set<string>): void;
  delAll(id: string): void;
  onMessage(message: ClusterMessage, offset?: string): void;
  close(): unknown;
}
type AdapterClass = new (nsp: Namespace, opts: object) => AdapterBase;
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
  private readonly adapters = new Map<string, Set<AdapterBase & { remote: RemoteClients }>>();
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
      readonly remote: RemoteClients;
      private readonly sweeper: NodeJS.Timeout;

      constructor(nsp: Namespace) {
        super(nsp, HEARTBEAT);
        this.remote = new RemoteClients(nsp, this.uid, (p) => span.publish(path, p, 's'));
        this.sweeper = setInterval(() => this.remote.sweep(HEARTBEAT.heartbeatTimeout), HEARTBEAT.heartbeatInterval);
        this.sweeper.unref();
        span.add(path, this);
      }

      override init(): unknown {
        const result = super.init();
        this.remote.hello();
        return result;
      }

      override addAll(id: string, rooms: Set<string>): void {
        super.addAll(id, rooms);
        this.remote.joined(id);
      }

      override delAll(id: string): void {
        super.delAll(id);
        this.remote.left(id);
      }

      override onMessage(message: ClusterMessage, offset?: string): void {
        if (typeof message.uid === 'string' && message.uid !== this.uid) this.remote.heardFrom(message.uid);
        super.onMessage(message, offset);
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
        clearInterval(this.sweeper);
        this.remote.close();
        span.remove(path, this);
        return super.close();
      }
    }
    io.adapter(RelayAdapter);
  }

  private add(path: string, adapter: AdapterBase & { remote: RemoteClients }): void {
    let set = this.adapters.get(path);
    if (!set) this.adapters.set(path, (set = new Set()));
    set.add(adapter);
  }

  private remove(path: string, adapter: AdapterBase & { remote: RemoteClients }): void {
    const set = this.adapters.get(path);
    set?.delete(adapter);
    if (set?.size === 0) this.adapters.delete(path);
  }

  /** An adapter message (`m`) or a presence (`s`) of the server at `path`. */
  private publish(path: string, message: ClusterMessage | Presence, field: 'm' | 's' = 'm'): void {
    const data = { p: path, [field]: message };
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
    const { p, m, s } = data as { p?: unknown; m?: ClusterMessage; s?: Presence };
    const message = m ?? s;
    if (typeof p !== 'string' || typeof message !== 'object' || message === null) return;
    for (const adapter of this.adapters.get(p) ?? []) {
      if (adapter.nsp.name !== message.nsp) continue;
      try {
        if (s) adapter.remote.arrived(s);
        else adapter.onMessage(message);
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
