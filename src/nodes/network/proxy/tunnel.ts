/** A TCP tunnel through a forward proxy (HTTP CONNECT), for https requests and WebSocket clients. */
import http from 'node:http';
import type net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

export interface Proxy {
  url: URL;
  /** `Proxy-Authorization` header value. */
  authorization?: string;
}

/** Asks the proxy for a tunnel to host:port and hands over the raw socket, or the reason it failed. */
function openTunnel(proxy: Proxy, host: string, port: number, done: (err: Error | null, socket?: net.Socket) => void): void {
  const authority = `${host}:${port}`;
  const headers: Record<string, string> = { host: authority };
  if (proxy.authorization) headers['proxy-authorization'] = proxy.authorization;
  const connect = http.request({ host: proxy.url.hostname, port: proxy.url.port || 80, method: 'CONNECT', path: authority, headers });
  connect.on('connect', (res, socket) => {
    if (res.statusCode !== 200) {
      socket.destroy();
      return done(Object.assign(new Error(`Proxy CONNECT answered ${res.statusCode}`), { code: 'ERR_PROXY_CONNECT' }));
    }
    done(null, socket);
  });
  connect.on('error', (err) => done(err));
  connect.end();
}

/**
 * `createConnection` for a request to `target` through the proxy: the tunnel, wrapped in TLS for
 * https/wss targets. Node's http client and agents accept this callback form.
 */
export function tunnelConnection(proxy: Proxy, target: URL, tlsOptions?: tls.ConnectionOptions) {
  const secure = target.protocol === 'https:' || target.protocol === 'wss:';
  const port = Number(target.port) || (secure ? 443 : 80);
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  return (_opts: unknown, done: (err: Error | null, socket?: Duplex) => void): undefined => {
    openTunnel(proxy, host, port, (err, socket) => {
      if (err || !socket) return done(err ?? new Error('no tunnel'));
      if (!secure) return done(null, socket);
      // A tls-config's server name is the SNI, as on a direct connection (Node-RED 5).
      const servername = tlsOptions?.servername || (target.hostname.startsWith('[') ? undefined : target.hostname);
      done(null, tls.connect({ ...tlsOptions, socket, servername }));
    });
    return undefined;
  };
}

/** An agent whose every connection is a fresh tunnel to `target` (what the ws client takes). */
export function tunnelAgent(proxy: Proxy, target: URL, tlsOptions?: tls.ConnectionOptions): http.Agent {
  const agent = new http.Agent();
  (agent as unknown as { createConnection: unknown }).createConnection = tunnelConnection(proxy, target, tlsOptions);
  return agent;
}
