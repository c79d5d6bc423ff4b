import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { answerOnSocket } from './socket-answer.js';

/**
 * What the HTTP server's websocket upgrade listeners (the editor's `/comms`, the flows' websocket
 * listeners, the server's own limits) tell each other. An upgrade request is handed to every
 * listener at once, and a socket none of them takes used to be held until a timeout: a listener
 * that takes one says so here, so the server can answer the others at once.
 */
const claimed = new WeakSet<Duplex>();
const own = new WeakSet<object>();
const addresses = new WeakMap<Server, (req: IncomingMessage) => string>();

/** `socket` is being upgraded (or refused) by a listener of Runnel's own. */
export function claimUpgrade(socket: Duplex): void {
  claimed.add(socket);
}

export function isClaimed(socket: Duplex): boolean {
  return claimed.has(socket);
}

/** Adds an upgrade listener that claims what it takes; the listeners that are not, a module's, get time to answer. */
export function onUpgrade(server: Server, listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): void {
  own.add(listener);
  server.on('upgrade', listener);
}

/** Whether a listener other than Runnel's own (a node module's, through RED.server) may take upgrades. */
export function othersListen(server: Server): boolean {
  return server.listeners('upgrade').some((l) => !own.has(l));
}

/** How the server reads a request's client address (a trusted proxy's X-Forwarded-For). */
export function setClientAddress(server: Server, of: (req: IncomingMessage) => string): void {
  addresses.set(server, of);
}

export function clientAddressOf(server: Server, req: IncomingMessage): string {
  return addresses.get(server)?.(req) ?? req.socket.remoteAddress ?? '';
}

/** Answers an upgrade request with an error (`{code, message}`) and closes its socket. */
export function refuseUpgrade(socket: Duplex, status: number, code: string, message: string, headers = ''): void {
  claimUpgrade(socket);
  answerOnSocket(socket, status, code, message, headers);
}
