import { randomBytes, randomInt } from 'node:crypto';
import type { Logger } from '../../base/log.js';
import type { ClusterRelay, RelayMessage } from '../../storage/contract.js';
import { isRecord, parseLocation, parsePublicSession, type PresenceUser, type PublicSession } from './location.js';
import { RemoteSessions } from './remote-sessions.js';

/**
 * Multiplayer presence (`editorTheme.multiplayer.enabled`), as Node-RED 4.1/5 has it: an editor
 * sends `multiplayer/connect` with a session id of its own (kept across websocket reconnects),
 * `multiplayer/location` as its user moves, `multiplayer/disconnect` at logout; it is sent
 * `multiplayer/init` (its public id and every session), and the others' `connection-added`,
 * `connection-removed` and `location`. The public id is the server's, so an editor never learns
 * another's own id (which would let it take that session over).
 *
 * With shared storage, sessions cross the cluster relay: each instance announces its own, beats
 * their ids every BEAT_MS (a receiver catches up on what it missed by asking for them again), and
 * an instance not heard of for DROP_AFTER_MS loses its sessions in every other editor.
 */

/** Node-RED keeps a session whose websocket dropped this long, so a reconnecting editor keeps its public id. */
const IDLE_MS = 30_000;
/** Sessions one instance holds; an editor beyond it works without presence. */
const MAX_SESSIONS = 100;
/** The editor sends a location at most every 100 ms; faster ones are dropped. */
const MIN_LOCATION_MS = 50;
const BEAT_MS = 2000;
const DROP_AFTER_MS = 6000;
const KIND = 'presence';

/** A message for the editors, as the runtime's `comms` events carry one. */
export interface PresenceMessage {
  topic: string;
  data: unknown;
  session?: string;
  excludeSession?: string;
}

export interface PresenceDeps {
  send: (message: PresenceMessage) => void;
  log: Logger;
  /** With shared storage: the relay and this instance's id. */
  cluster?: { relay: ClusterRelay; self: string };
  now?: () => number;
}

interface LocalSession {
  info: PublicSession;
  connection: string | undefined;
  idle?: ReturnType<typeof setTimeout>;
  lastLocation: number;
}

export class Presence {
  /** By the user's name (empty for anonymous) and the editor's own session id. */
  private readonly sessions = new Map<string, LocalSession>();
  /** Websocket connection to its key in `sessions`. */
  private readonly connections = new Map<string, string>();
  private readonly remote = new RemoteSessions();
  private readonly now: () => number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private detach: (() => void) | undefined;

  constructor(private readonly deps: PresenceDeps) {
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    const cluster = this.deps.cluster;
    if (!cluster) return;
    this.detach = cluster.relay.onMessage((m) => this.arrived(m));
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
    // Instances already running announce their sessions to this one.
    this.relay({ t: 'hello' });
  }

  stop(): void {
    clearInterval(this.timer);
    this.detach?.();
    for (const s of this.sessions.values()) clearTimeout(s.idle);
    this.sessions.clear();
    this.connections.clear();
  }

  /** A `{topic, data}` message from an editor's websocket `connection`. */
  receive(connection: string, user: PresenceUser | undefined, topic: string, data: unknown): void {
    if (topic === 'multiplayer/connect') this.connect(connection, user, data);
    else if (topic === 'multiplayer/location') this.locate(connection, user, data);
    else if (topic === 'multiplayer/disconnect') this.disconnect(connection);
  }

  /** The websocket closed: its session goes idle (others see it leave) and is forgotten after IDLE_MS. */
  closed(connection: string): void {
    const id = this.connections.get(connection);
    if (id === undefined) return;
    this.connections.delete(connection);
    const session = this.sessions.get(id);
    if (!session) return;
    session.connection = undefined;
    session.idle = setTimeout(() => this.sessions.delete(id), IDLE_MS);
    session.idle.unref();
    this.removed(session.info.session, false);
  }

  private connect(connection: string, user: PresenceUser | undefined, data: unknown): void {
    const own = isRecord(data) ? data.session : undefined;
    if (typeof own !== 'string' || !/^[a-zA-Z0-9]{1,64}$/.test(own)) return;
    // Sessions are the user's: another user sending the same id gets a session of their own.
    const id = `${user && !user.anonymous ? user.username : ''}\n${own}`;
    const previous = this.connections.get(connection);
    if (previous !== undefined && previous !== id) this.drop(previous);
    let session = this.sessions.get(id);
    // Another connection holds that id: it is not handed over.
    if (session?.connection !== undefined && session.connection !== connection) return;
    if (!session) {
      if (this.sessions.size >= MAX_SESSIONS) {
        this.deps.log.debug('multiplayer: too many sessions; an editor goes without presence');
        return;
      }
      session = { info: { session: `PUB${randomBytes(8).toString('hex')}PUB`, user: presenceUser(user) }, connection, lastLocation: 0 };
      this.sessions.set(id, session);
    }
    clearTimeout(session.idle);
    session.connection = connection;
    this.connections.set(connection, id);
    const location = isRecord(data) ? parseLocation(data.location) : undefined;
    if (location) session.info.location = location;
    this.added(session.info, connection);
    this.deps.send({ topic: 'multiplayer/init', data: { session: session.info.session, sessions: this.list() }, session: connection });
  }

  private locate(connection: string, user: PresenceUser | undefined, data: unknown): void {
    const session = this.of(connection);
    const location = parseLocation(data);
    if (!session || !location) return;
    const now = this.now();
    if (now - session.lastLocation < MIN_LOCATION_MS) return;
    session.lastLocation = now;
    // The editor logged in (or out) on the same page: the others see who it is now.
    if (user && (user.anonymous === true) !== (session.info.user.anonymous === true)) {
      session.info.user = presenceUser(user);
      this.added(session.info, connection);
    }
    session.info.location = location;
    const payload = { session: session.info.session, ...location };
    this.deps.send({ topic: 'multiplayer/location', data: payload, excludeSession: connection });
    this.relay({ t: 'loc', s: payload });
  }

  private disconnect(connection: string): void {
    const id = this.connections.get(connection);
    if (id !== undefined) this.drop(id);
  }

  /** Forgets a session now (logout, or its connection took another id). */
  private drop(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    clearTimeout(session.idle);
    if (session.connection !== undefined) this.connections.delete(session.connection);
    this.removed(session.info.session, true);
  }

  private of(connection: string): LocalSession | undefined {
    const id = this.connections.get(connection);
    return id === undefined ? undefined : this.sessions.get(id);
  }

  private added(info: PublicSession, connection?: string): void {
    this.deps.send({ topic: 'multiplayer/connection-added', data: info, ...(connection ? { excludeSession: connection } : {}) });
    this.relay({ t: 'add', s: info });
  }

  private removed(publicId: string, disconnected: boolean): void {
    this.deps.send({ topic: 'multiplayer/connection-removed', data: { session: publicId, ...(disconnected ? { disconnected } : {}) } });
    this.relay({ t: 'remove', id: publicId, ...(disconnected ? { disconnected } : {}) });
  }

  /** Every active session: this instance's and the others'. */
  private list(): PublicSession[] {
    const local = [...this.sessions.values()].filter((s) => s.connection !== undefined).map((s) => s.info);
    return [...local, ...this.remote.list()];
  }

  private relay(data: Record<string, unknown>): void {
    this.deps.cluster?.relay.publish(KIND, data);
  }

  private beat(): void {
    const ids = [...this.sessions.values()].filter((s) => s.connection !== undefined).map((s) => s.info.session);
    if (ids.length > 0) this.relay({ t: 'beat', ids });
    for (const id of this.remote.sweep(this.now() - DROP_AFTER_MS)) this.deps.send({ topic: 'multiplayer/connection-removed', data: { session: id } });
  }

  private arrived({ origin, kind, data }: RelayMessage): void {
    if (kind !== KIND || !isRecord(data)) return;
    const now = this.now();
    if (data.t === 'add') {
      const info = parsePublicSession(data.s);
      if (!info) return;
      const known = this.remote.get(origin, info.session);
      // Announced again (an instance answering another's hello): the editor would list it twice.
      const same = known !== undefined && known.user.username === info.user.username && known.user.anonymous === info.user.anonymous;
      if (this.remote.put(origin, info, now) && !same) this.deps.send({ topic: 'multiplayer/connection-added', data: info });
    } else if (data.t === 'remove' && typeof data.id === 'string') {
      if (this.remote.remove(origin, data.id)) this.deps.send({ topic: 'multiplayer/connection-removed', data: { session: data.id, ...(data.disconnected === true ? { disconnected: true } : {}) } });
    } else if (data.t === 'loc' && isRecord(data.s) && typeof data.s.session === 'string') {
      const info = this.remote.get(origin, data.s.session);
      const location = parseLocation(data.s);
      if (!info || !location) return;
      info.location = location;
      this.remote.put(origin, info, now);
      this.deps.send({ topic: 'multiplayer/location', data: { session: info.session, ...location } });
    } else if (data.t === 'beat' && Array.isArray(data.ids)) {
      const { removed, missing } = this.remote.beat(origin, new Set(data.ids.filter((id): id is string => typeof id === 'string')), now);
      for (const id of removed) this.deps.send({ topic: 'multiplayer/connection-removed', data: { session: id } });
      if (missing) this.relay({ t: 'hello', to: origin });
    } else if (data.t === 'hello' && (data.to === undefined || data.to === this.deps.cluster?.self)) {
      for (const s of this.sessions.values()) if (s.connection !== undefined) this.relay({ t: 'add', s: s.info });
    }
  }
}

function presenceUser(user: PresenceUser | undefined): PresenceUser {
  if (user && !user.anonymous) return { username: user.username };
  return { username: `Anon ${randomInt(100)}`, anonymous: true };
}
