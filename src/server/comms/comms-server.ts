import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { WebSocketServer, WebSocket, RawData } from 'ws';
import type * as WsModule from 'ws';
import { lazy } from '../../base/lazy.js';
import { claimUpgrade, onUpgrade, refuseUpgrade } from '../../base/upgrades.js';
import type { AuthService } from '../../auth/types.js';
import type { Logger } from '../../base/log.js';
import { normaliseAddress } from '../../auth/throttle.js';
import { topicMatches } from './topics.js';
import { hasPermission } from '../../auth/permissions.js';
import { PendingAdmission } from './admission.js';
import type { OriginCheck } from '../request-origin.js';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/types.js';

export interface CommsOptions {
  /** The URL path of the websocket, `<httpAdminRoot>comms`. */
  path: string;
  auth: AuthService;
  log: Logger;
  /** Milliseconds of silence before a client gets an `hb` (Node-RED: 15 s). */
  heartbeatMs?: number;
  /** Messages a client may have waiting; beyond it the oldest are dropped and counted. */
  maxQueue?: number;
  /** Bytes of messages a client may have waiting, the same way (debug messages run to kilobytes each). */
  maxQueueBytes?: number;
  /** Refuses upgrades from pages of other origins and, without adminAuth, unknown Host names. */
  originCheck?: OriginCheck;
  /** requireHttps: a plain ws:// upgrade is refused (the token would travel in clear). */
  requireHttps?: boolean;
  /** The client's address (a trusted proxy's X-Forwarded-For), which bounds its unauthenticated sockets. */
  clientAddress?: (req: IncomingMessage) => string;
  /** Milliseconds a socket may stay open without authenticating (the editor sends its token at once). */
  authTimeoutMs?: number;
  /** Unauthenticated sockets allowed at once, in all; keep it well below the server's connection cap. */
  maxPending?: number;
}

/** Who a message goes to, as Node-RED's comms events say it: one connection, or all but one. */
export interface CommsTarget {
  session?: string;
  excludeSession?: string;
}

/** What an editor connection tells the runtime: its `{topic, data}` messages, and its end. */
export interface CommsClientHandlers {
  message(session: string, user: { username: string; anonymous?: true } | undefined, topic: string, data: unknown): void;
  closed(session: string): void;
}

/** Node-RED batches what it sends: at most this many messages per frame, gathered for BATCH_MS. */
const MAX_BATCH = 50;
const BATCH_MS = 50;
/** Bytes the socket may hold unsent before the client counts as slow and its queue stops draining. */
const MAX_BUFFERED = 1024 * 1024;
/** How often the tokens of connected editors are checked (revocation and expiry end the session). */
const AUTH_CHECK_MS = 1000;
/**
 * A revoked session stops receiving messages at once, but is told `auth:fail` only after this
 * grace: the editor that logged itself out reloads the page meanwhile, and an `auth:fail` arriving
 * during that reload makes it open a login dialog it then tears down half-built (a page error).
 */
const REVOKED_GRACE_MS = 3000;
/** Client messages are small: subscriptions, the auth token, multiplayer locations. */
const MAX_PAYLOAD = 64 * 1024;
/** Node-RED lets an editor on /comms only with this permission (a `nodes.read` token gets nothing). */
const COMMS_PERMISSION = 'status.read';
/** Unauthenticated sockets one address may hold (an editor opens one per tab and sends its token at once). */
const PENDING_PER_ADDRESS = 10;
/** Filters one client may hold: the editor takes about ten; each is scanned on every publish. */
const MAX_SUBSCRIPTIONS = 256;
/** Topics are short paths; a longer filter is refused. */
const MAX_FILTER_LENGTH = 1024;

class Client {
  active = false;
  token: string | undefined;
  /** Who authenticated (undefined without adminAuth). */
  principal: Principal | undefined;
  /** Names the connection to the runtime (Node-RED's comms session), never to other clients. */
  readonly session = randomUUID();
  authTimer: ReturnType<typeof setTimeout> | undefined;
  readonly subscriptions = new Set<string>();
  /** Serialised `{topic,data}` entries waiting for the next frame, from index `head` on. */
  queue: string[] = [];
  head = 0;
  /** UTF-16 length of the waiting entries (their size in memory, give or take). */
  queued = 0;
  dropped = 0;
  lastSent = Date.now();
  timer: ReturnType<typeof setTimeout> | undefined;
  revokedTimer: ReturnType<typeof setTimeout> | undefined;
  /** Messages from the client are handled one at a time (the auth check is asynchronous). */
  chain: Promise<void> = Promise.resolve();

  /** `socket` is the connection under `ws`, by which the admission counts it until it authenticates. */
  constructor(readonly ws: WebSocket, readonly socket: Duplex) {}

  get waiting(): number {
    return this.queue.length - this.head;
  }

  /** Takes up to `n` entries off the front. */
  take(n: number): string[] {
    const batch = this.queue.slice(this.head, this.head + n);
    for (const entry of batch) {
      this.queued -= entry.length;
      this.queue[this.head++] = '';
    }
    this.compact();
    return batch;
  }

  /** Drops the oldest entry. */
  dropOldest(): void {
    this.queued -= this.queue[this.head].length;
    this.queue[this.head++] = '';
    this.dropped++;
    this.compact();
  }

  clear(): void {
    this.queue = [];
    this.head = 0;
    this.queued = 0;
  }

  /** Dropping from the front is an index move; the array is rebuilt once half of it is spent. */
  private compact(): void {
    if (this.head === this.queue.length) this.clear();
    else if (this.head > 512 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  subscribed(topic: string): boolean {
    for (const filter of this.subscriptions) if (topicMatches(filter, topic)) return true;
    return false;
  }
}

/**
 * The editor's `/comms` websocket, as Node-RED speaks it: with adminAuth the first message is
 * `{"auth": token}` (answered `{"auth":"ok"}` or `{"auth":"fail"}` and closed); then
 * `{"subscribe": filter}` with MQTT wildcards, which also delivers the retained messages that
 * match; `{topic, data}` messages (multiplayer presence) go to the runtime with the connection's
 * session. The server sends JSON arrays of `{topic, data}`. Each client's queue is bounded: a client
 * that does not read loses its oldest messages (counted) rather than growing the server's memory.
 */
/** ws loads with the first editor connection: an idle runtime (or one only the admin API drives) does without it. */
const ws = lazy<typeof WsModule>('ws');

export class CommsServer {
  private wss: WebSocketServer | undefined;
  private readonly clients = new Set<Client>();
  private readonly retained = new Map<string, string>();
  private readonly heartbeatMs: number;
  private readonly maxQueue: number;
  private readonly maxQueueBytes: number;
  private readonly ticker: ReturnType<typeof setInterval>;
  private readonly pending: PendingAdmission<Duplex>;
  private handlers: CommsClientHandlers | undefined;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head);

  constructor(private readonly server: Server, private readonly opts: CommsOptions) {
    this.heartbeatMs = opts.heartbeatMs ?? 15_000;
    this.maxQueue = opts.maxQueue ?? 1000;
    this.maxQueueBytes = opts.maxQueueBytes ?? 1024 * 1024;
    this.pending = new PendingAdmission(PENDING_PER_ADDRESS, opts.maxPending ?? 200);
    onUpgrade(server, this.onUpgrade);
    this.ticker = setInterval(() => this.tick(), Math.min(AUTH_CHECK_MS, this.heartbeatMs));
    this.ticker.unref();
  }

  /** Connected clients (authenticated or not). */
  get size(): number {
    return this.clients.size;
  }

  /** Connected clients that may receive messages (authenticated, or no adminAuth). */
  get receiving(): number {
    let n = 0;
    for (const c of this.clients) if (c.active) n++;
    return n;
  }

  /** The longest queue any client has waiting. */
  get longestQueue(): number {
    let n = 0;
    for (const c of this.clients) n = Math.max(n, c.waiting);
    return n;
  }

  /** The most any client has waiting, in UTF-16 units of its serialised messages. */
  get largestQueue(): number {
    let n = 0;
    for (const c of this.clients) n = Math.max(n, c.queued);
    return n;
  }

  /** Messages dropped so far because clients did not keep up. */
  get dropped(): number {
    let n = 0;
    for (const c of this.clients) n += c.dropped;
    return n;
  }

  /** Hands the clients' `{topic, data}` messages and closes to `handlers`. */
  handleClients(handlers: CommsClientHandlers | undefined): void {
    this.handlers = handlers;
  }

  /** Sends to every subscribed client (or those of `target`); `retain` keeps it for later subscribers. */
  publish(topic: string, data: unknown, retain = false, target: CommsTarget = {}): void {
    let entry: string;
    try {
      entry = JSON.stringify({ topic, data });
    } catch (err) {
      // A node published something JSON cannot carry (a cycle, a BigInt): it is not sent.
      this.opts.log.warn({ topic, err: (err as Error).message }, 'comms: message not sent');
      return;
    }
    if (retain) this.retained.set(topic, entry);
    for (const client of this.clients) {
      if (target.session !== undefined && client.session !== target.session) continue;
      if (target.excludeSession !== undefined && client.session === target.excludeSession) continue;
      if (client.active && client.subscribed(topic)) this.enqueue(client, entry);
    }
  }

  /** Whether any editor would receive a message on `topic` (so a publisher can skip encoding one). */
  hasSubscriber(topic: string): boolean {
    for (const client of this.clients) if (client.active && client.subscribed(topic)) return true;
    return false;
  }

  /** Drops a retained message. */
  forget(topic: string): void {
    this.retained.delete(topic);
  }

  /** Closes every connection and stops listening for upgrades. */
  close(): void {
    clearInterval(this.ticker);
    this.server.off('upgrade', this.onUpgrade);
    for (const client of this.clients) {
      this.settle(client);
      clearTimeout(client.timer);
      clearTimeout(client.revokedTimer);
      client.ws.terminate();
    }
    this.clients.clear();
    this.wss?.close();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const pathname = (req.url ?? '').split('?')[0];
    // Other paths belong to whoever else listens (websocket nodes through RED.server).
    if (pathname !== this.opts.path && pathname !== `${this.opts.path}/`) return;
    claimUpgrade(socket);
    if (this.opts.requireHttps && !isSecure(req)) {
      return refuseUpgrade(socket, 403, 'https_required', 'requireHttps: connect to /comms over wss://');
    }
    const refusal = this.opts.originCheck?.('GET', req.headers);
    if (refusal) return refuseUpgrade(socket, refusal.status, refusal.code, refusal.message);
    if (this.opts.auth.enabled) {
      const address = normaliseAddress(this.opts.clientAddress?.(req) ?? req.socket.remoteAddress ?? '');
      this.pending.admit(socket, address, () => socket.destroy());
      // Also covers a socket that dies during the handshake and never reaches connect.
      socket.once('close', () => this.pending.release(socket));
    }
    this.wss ??= new (ws().WebSocketServer)({ noServer: true, maxPayload: MAX_PAYLOAD });
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connect(ws, socket));
  }

  private connect(ws: WebSocket, socket: Duplex): void {
    const client = new Client(ws, socket);
    this.clients.add(client);
    client.active = !this.opts.auth.enabled;
    if (this.opts.auth.enabled) {
      client.authTimer = setTimeout(() => {
        this.opts.log.debug('comms: closing a connection that did not authenticate in time');
        this.fail(client);
      }, this.opts.authTimeoutMs ?? 5000);
      client.authTimer.unref();
    }
    ws.on('message', (data: RawData) => {
      client.chain = client.chain.then(() => this.receive(client, data));
    });
    ws.on('close', () => {
      this.settle(client);
      clearTimeout(client.timer);
      clearTimeout(client.revokedTimer);
      this.clients.delete(client);
      this.handlers?.closed(client.session);
    });
    ws.on('error', (err) => this.opts.log.debug({ err: err.message }, 'comms connection error'));
  }

  private async receive(client: Client, data: RawData): Promise<void> {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(String(data)) as Record<string, unknown>;
      if (msg === null || typeof msg !== 'object') throw new Error('not an object');
    } catch {
      this.opts.log.debug('comms: ignoring a message that is not a JSON object');
      return;
    }
    if (this.opts.auth.enabled && (typeof msg.auth === 'string' || !client.active)) {
      const principal = typeof msg.auth === 'string' ? await this.opts.auth.authenticate(msg.auth) : null;
      if (!principal || !hasPermission(principal.scope, COMMS_PERMISSION)) return this.fail(client);
      this.settle(client);
      client.token = msg.auth as string;
      client.principal = principal;
      client.active = true;
      this.sendRaw(client, '{"auth":"ok"}');
      return;
    }
    if (typeof msg.subscribe === 'string') {
      if (client.subscriptions.has(msg.subscribe)) return;
      if (client.subscriptions.size >= MAX_SUBSCRIPTIONS || msg.subscribe.length > MAX_FILTER_LENGTH) {
        this.opts.log.warn({ subscriptions: client.subscriptions.size }, 'comms: a subscription beyond the bounds was ignored');
        return;
      }
      client.subscriptions.add(msg.subscribe);
      for (const [topic, entry] of this.retained) if (topicMatches(msg.subscribe, topic)) this.enqueue(client, entry);
    } else if (typeof msg.unsubscribe === 'string') {
      client.subscriptions.delete(msg.unsubscribe);
    } else if (typeof msg.topic === 'string' && client.active) {
      const user = client.principal && { username: client.principal.username, ...(client.principal.anonymous ? { anonymous: true as const } : {}) };
      this.handlers?.message(client.session, user, msg.topic, msg.data);
    }
  }

  /** Stops counting the client as unauthenticated (it authenticated, failed or closed). */
  private settle(client: Client): void {
    clearTimeout(client.authTimer);
    this.pending.release(client.socket);
  }

  private fail(client: Client): void {
    this.settle(client);
    client.active = false;
    this.sendRaw(client, '{"auth":"fail"}');
    client.ws.close();
  }

  private sendRaw(client: Client, text: string): void {
    if (client.ws.readyState !== client.ws.OPEN) return;
    client.ws.send(text);
    client.lastSent = Date.now();
  }

  private enqueue(client: Client, entry: string): void {
    // A single message larger than the whole budget still goes, alone.
    while (client.waiting > 0 && (client.waiting >= this.maxQueue || client.queued + entry.length > this.maxQueueBytes)) {
      if (client.dropped === 0) this.opts.log.warn('comms: an editor is not keeping up; dropping its oldest messages');
      client.dropOldest();
    }
    client.queue.push(entry);
    client.queued += entry.length;
    client.timer ??= setTimeout(() => this.flush(client), BATCH_MS);
  }

  private flush(client: Client): void {
    client.timer = undefined;
    if (client.ws.readyState !== client.ws.OPEN) {
      client.clear();
      return;
    }
    while (client.waiting && client.ws.bufferedAmount < MAX_BUFFERED) {
      this.sendRaw(client, `[${client.take(MAX_BATCH).join(',')}]`);
    }
    if (client.waiting) client.timer = setTimeout(() => this.flush(client), BATCH_MS);
  }

  private tick(): void {
    const now = Date.now();
    for (const client of this.clients) {
      if (!client.active) continue;
      if (client.token !== undefined) {
        void this.opts.auth.authenticate(client.token).then((p) => {
          if ((p && hasPermission(p.scope, COMMS_PERMISSION)) || !client.active) return;
          client.active = false;
          client.clear();
          client.revokedTimer = setTimeout(() => this.fail(client), REVOKED_GRACE_MS);
          client.revokedTimer.unref();
        });
      }
      if (now - client.lastSent >= this.heartbeatMs && client.waiting === 0) this.sendRaw(client, `[{"topic":"hb","data":${now}}]`);
    }
  }
}

/** Over TLS, or behind a TLS-terminating proxy that says so (as requireHttps trusts it for requests). */
function isSecure(req: IncomingMessage): boolean {
  if ((req.socket as TLSSocket).encrypted) return true;
  const proto = req.headers['x-forwarded-proto'];
  return typeof proto === 'string' && proto.split(',')[0].trim().toLowerCase() === 'https';
}
