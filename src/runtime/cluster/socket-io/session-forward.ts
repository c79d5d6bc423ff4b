import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { claimUpgrade } from '../../../base/upgrades.js';

/**
 * Engine.io sessions across instances. Behind a balancer without sticky sessions the requests of
 * one HTTP long-polling session, and its upgrade to a websocket, land on any instance, while only
 * the instance that made the handshake holds the session. Here session ids begin with their
 * instance's id (base64url), and an instance that gets a request for a session of another passes
 * it on to that instance's `instanceUrl`, as the cluster list has it (never a URL from the
 * request): a polling request is proxied, an upgrade piped through. When the owner has no URL or
 * cannot be reached, engine.io answers as for any unknown session (400), and the client starts a
 * new one.
 */

export interface SessionOwners {
  /** This instance's id. */
  self: string;
  /** The `instanceUrl` of an instance of the cluster, or null when it has none or is not listed. */
  urlOf(instanceId: string): Promise<string | null>;
}

export interface Engine {
  clients: Record<string, unknown>;
  generateId(req: IncomingMessage): string | Promise<string>;
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

export function forwardSessions(engine: Engine, owners: SessionOwners): void {
  const generateId = engine.generateId.bind(engine);
  const handleRequest = engine.handleRequest.bind(engine);
  const handleUpgrade = engine.handleUpgrade.bind(engine);
  const tag = Buffer.from(owners.self).toString('base64url');
  engine.generateId = async (req) => `${tag}.${await generateId(req)}`;

  /** The owner's URL when the request is for a session another instance holds. */
  const elsewhere = async (req: IncomingMessage): Promise<string | null> => {
    const sid = new URL(req.url ?? '/', 'http://localhost').searchParams.get('sid');
    const dot = sid?.indexOf('.') ?? -1;
    if (!sid || dot < 1 || sid in engine.clients) return null;
    const owner = Buffer.from(sid.slice(0, dot), 'base64url').toString();
    return owner === owners.self ? null : owners.urlOf(owner).catch(() => null);
  };

  engine.handleRequest = (req, res) => {
    void elsewhere(req).then((url) => (url ? proxyRequest(url, req, res, () => handleRequest(req, res)) : handleRequest(req, res)));
  };
  engine.handleUpgrade = (req, socket, head) => {
    claimUpgrade(socket);
    void elsewhere(req).then((url) => (url ? pipeUpgrade(url, req, socket, head, () => handleUpgrade(req, socket, head)) : handleUpgrade(req, socket, head)));
  };
}

/** The request's path under the owner's URL (which may have a path of its own, behind a proxy). */
function targetOf(base: string, req: IncomingMessage): URL {
  const url = new URL(base);
  return new URL(`${url.origin}${url.pathname.replace(/\/$/, '')}${req.url ?? '/'}`);
}

function proxyRequest(base: string, req: IncomingMessage, res: ServerResponse, unreachable: () => void): void {
  const target = targetOf(base, req);
  const out = (target.protocol === 'https:' ? https : http).request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => {
    if (!res.headersSent) unreachable();
    else res.destroy();
  });
  res.on('close', () => out.destroy());
  req.pipe(out);
}

function pipeUpgrade(base: string, req: IncomingMessage, socket: Duplex, head: Buffer, unreachable: () => void): void {
  const target = targetOf(base, req);
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  const secure = target.protocol === 'https:';
  const out = secure ? tls.connect({ host: target.hostname, port, servername: target.hostname }) : net.connect(port, target.hostname);
  let connected = false;
  out.once(secure ? 'secureConnect' : 'connect', () => {
    connected = true;
    const lines = [`${req.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (req.rawHeaders[i]!.toLowerCase() !== 'host') lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    }
    lines.push(`Host: ${target.host}`, '', '');
    out.write(lines.join('\r\n'));
    if (head.length > 0) out.write(head);
    out.pipe(socket);
    socket.pipe(out);
  });
  out.on('error', () => {
    if (connected) socket.destroy();
    else unreachable();
  });
  socket.on('error', () => out.destroy());
  socket.on('close', () => out.destroy());
  out.on('close', () => socket.destroy());
}
