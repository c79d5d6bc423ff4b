import { EventEmitter } from 'node:events';

/**
 * The clients other instances hold, as socket objects of this instance's namespace. Apps such as
 * Dashboard 2.0 keep the sockets they see connect and send each update to each one
 * (`socket.emit`), which no adapter sees: so every client connected to another instance also
 * connects here, as a RemoteClient whose `emit` goes through the adapter to the instance holding
 * the real socket (`nsp.to(id)`). Its events never fire here (they run where the client is
 * connected), except `disconnect` when that client leaves. Each instance announces its clients as
 * they join and leave, all of them again when another instance says hello, and drops the clients
 * of an instance not heard from within the adapter's heartbeat timeout.
 */

export interface Handshake {
  headers: Record<string, unknown>;
  query: Record<string, unknown>;
  address?: unknown;
  time?: unknown;
  issued?: unknown;
  url?: unknown;
  xdomain?: unknown;
  secure?: unknown;
  auth?: unknown;
}

interface Broadcast {
  emit(event: string, ...args: unknown[]): unknown;
  except(room: string): Broadcast;
}
export interface Namespace {
  readonly name: string;
  readonly sockets: Map<string, { handshake: Handshake }>;
  to(room: string): Broadcast;
  except(room: string): Broadcast;
  emitReserved(event: string, ...args: unknown[]): unknown;
}

export interface Presence {
  t: 'up' | 'down' | 'hello';
  nsp: string;
  uid: string;
  id?: string;
  hs?: Handshake;
}

/** Request headers that stay with the instance the client reached (credentials). */
const PRIVATE_HEADERS = new Set(['cookie', 'authorization', 'proxy-authorization']);

class RemoteClient extends EventEmitter {
  readonly connected = true;
  readonly remote = true;
  data: Record<string, unknown> = {};

  constructor(readonly nsp: Namespace, readonly id: string, readonly handshake: Handshake, readonly owner: string) {
    super();
  }

  override emit(event: string, ...args: unknown[]): boolean {
    this.nsp.to(this.id).emit(event, ...args);
    return true;
  }

  get broadcast(): Broadcast {
    return this.nsp.except(this.id);
  }

  to(room: string): Broadcast {
    return this.nsp.to(room).except(this.id);
  }

  get rooms(): Set<string> {
    return new Set([this.id]);
  }

  get request(): { headers: Record<string, unknown>; url: unknown } {
    return { headers: this.handshake.headers, url: this.handshake.url };
  }

  /** The client left its instance. */
  left(reason: string): void {
    EventEmitter.prototype.emit.call(this, 'disconnect', reason);
    this.removeAllListeners();
  }
}

export class RemoteClients {
  private readonly clients = new Map<string, RemoteClient>();
  private readonly announced = new Set<string>();
  /** When each other instance's adapter was last heard from. */
  private readonly heard = new Map<string, number>();

  constructor(private readonly nsp: Namespace, private readonly uid: string, private readonly send: (p: Presence) => void, private readonly now = Date.now) {}

  hello(): void {
    this.send({ t: 'hello', nsp: this.nsp.name, uid: this.uid });
  }

  joined(id: string): void {
    const socket = this.nsp.sockets.get(id);
    if (!socket || this.announced.has(id)) return;
    this.announced.add(id);
    this.send({ t: 'up', nsp: this.nsp.name, uid: this.uid, id, hs: shareable(socket.handshake) });
  }

  left(id: string): void {
    if (this.announced.delete(id)) this.send({ t: 'down', nsp: this.nsp.name, uid: this.uid, id });
  }

  /** Any message of another instance's adapter (its heartbeats too). */
  heardFrom(uid: string): void {
    if (!this.heard.has(uid)) this.hello();
    this.heard.set(uid, this.now());
  }

  arrived(p: Presence): void {
    this.heardFrom(p.uid);
    if (p.t === 'hello') {
      for (const id of this.announced) {
        const socket = this.nsp.sockets.get(id);
        if (socket) this.send({ t: 'up', nsp: this.nsp.name, uid: this.uid, id, hs: shareable(socket.handshake) });
      }
    } else if (p.t === 'up' && typeof p.id === 'string' && !this.clients.has(p.id) && !this.nsp.sockets.has(p.id)) {
      const client = new RemoteClient(this.nsp, p.id, p.hs ?? { headers: {}, query: {} }, p.uid);
      this.clients.set(p.id, client);
      this.nsp.emitReserved('connect', client);
      this.nsp.emitReserved('connection', client);
    } else if (p.t === 'down' && typeof p.id === 'string') {
      this.drop(p.id, 'transport close');
    }
  }

  /** Drops the clients of instances silent for `timeoutMs`. */
  sweep(timeoutMs: number): void {
    const now = this.now();
    for (const [uid, at] of this.heard) {
      if (now - at <= timeoutMs) continue;
      this.heard.delete(uid);
      for (const client of [...this.clients.values()]) if (client.owner === uid) this.drop(client.id, 'transport close');
    }
  }

  close(): void {
    for (const id of [...this.clients.keys()]) this.drop(id, 'server shutting down');
  }

  private drop(id: string, reason: string): void {
    const client = this.clients.get(id);
    if (!client) return;
    this.clients.delete(id);
    client.left(reason);
  }
}

function shareable(hs: Handshake): Handshake {
  const headers = Object.fromEntries(Object.entries(hs.headers ?? {}).filter(([k]) => !PRIVATE_HEADERS.has(k.toLowerCase())));
  const { query, address, time, issued, url, xdomain, secure } = hs;
  return { headers, query: query ?? {}, address, time, issued, url, xdomain, secure };
}
