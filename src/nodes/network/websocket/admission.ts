import type { IncomingMessage, Server } from 'node:http';
import type WebSocket from 'ws';
import { clientAddressOf } from '../../../base/upgrades.js';

/**
 * Bounds on the connections of the flows' `websocket in` listeners. Each holds a connection of
 * `httpServerLimits.maxConnections` while it is open, and nothing closed one: anyone could open
 * silent websockets until the cap was full and the admin API and `/health` were refused. They are
 * now counted per server, per listener and per client address (webSocketNodeLimits, a quarter of
 * the connection cap by default), and the connections that are dead or idle are closed.
 */
export interface WebSocketNodeLimits {
  maxConnections: number;
  perListener: number;
  perAddress: number;
  idleTimeout: number;
  pingInterval: number;
}

/** The connections the listeners of one server hold. */
class Admission {
  private total = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly limits: WebSocketNodeLimits) {}

  /** Counts a connection to a listener holding `open`, or says why it is refused; `release` uncounts it. */
  admit(server: Server, req: IncomingMessage, open: number): { release: () => void } | string {
    const address = clientAddressOf(server, req);
    const mine = this.byAddress.get(address) ?? 0;
    if (mine >= this.limits.perAddress) return `This address holds webSocketNodeLimits.perAddress (${this.limits.perAddress}) websocket connections`;
    if (open >= this.limits.perListener) return `This websocket listener holds webSocketNodeLimits.perListener (${this.limits.perListener}) connections`;
    if (this.total >= this.limits.maxConnections) return `The websocket listeners hold webSocketNodeLimits.maxConnections (${this.limits.maxConnections}) connections`;
    this.total++;
    this.byAddress.set(address, mine + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.byAddress.get(address) ?? 1) - 1;
        if (left === 0) this.byAddress.delete(address);
        else this.byAddress.set(address, left);
      },
    };
  }
}

const admissions = new WeakMap<Server, Admission>();

/** The admission of `server`'s websocket listeners, made with `limits` on first use. */
export function admissionOf(server: Server, limits: WebSocketNodeLimits): Admission {
  let admission = admissions.get(server);
  if (!admission) admissions.set(server, (admission = new Admission(limits)));
  return admission;
}

/**
 * Closes a listener's connections that are idle (no message either way for `idleTimeout`) and
 * terminates those whose peer stopped answering pings (every `pingInterval`), so neither holds a
 * place for good. A closed connection that has not finished its closing handshake by the next
 * round is terminated.
 */
export class IdleWatch {
  private readonly sockets = new Map<WebSocket, { lastActive: number; alive: boolean }>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly limits: WebSocketNodeLimits, private readonly now: () => number = Date.now) {}

  add(ws: WebSocket): void {
    const state = { lastActive: this.now(), alive: true };
    this.sockets.set(ws, state);
    ws.on('message', () => (state.lastActive = this.now()));
    ws.on('pong', () => (state.alive = true));
    ws.once('close', () => {
      this.sockets.delete(ws);
      if (this.sockets.size === 0) this.stop();
    });
    if (!this.timer) {
      this.timer = setInterval(() => this.round(), Math.min(this.limits.pingInterval, this.limits.idleTimeout));
      this.timer.unref();
    }
  }

  /** A message went out on `ws`: it is in use. */
  touch(ws: WebSocket): void {
    const state = this.sockets.get(ws);
    if (state) state.lastActive = this.now();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private round(): void {
    const now = this.now();
    for (const [ws, state] of this.sockets) {
      if (ws.readyState === ws.CLOSING || !state.alive) {
        ws.terminate();
      } else if (now - state.lastActive >= this.limits.idleTimeout) {
        ws.close(1000, 'idle');
      } else {
        state.alive = false;
        ws.ping();
      }
    }
  }
}
