/**
 * `websocket-listener` and `websocket-client`: one config node type in Node-RED, two names. A
 * listener accepts connections on a path under `httpNodeRoot` through the HTTP server's upgrade
 * event; a client (a `ws://`/`wss://` path) connects out once a websocket in or out node uses it
 * (Node-RED 5), pings every `hb` seconds when asked, and reconnects 3 s after losing the connection. Each connection is a session: messages from it carry
 * `msg._session = {type: "websocket", id}`, and a reply with that session goes back to it alone.
 */
import type { IncomingMessage, Server } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import type { WebSocketServer } from 'ws';
import type * as WsModule from 'ws';
import { lazy } from '../../../base/lazy.js';
import type { Msg, NodeConfig, NodeInstance, RedApi } from '../../../runtime/red-api/red-api-types.js';
import type { TlsConfigNode } from '../tls/tls.js';
import { proxySelector } from '../proxy/select.js';
import { tunnelAgent } from '../proxy/tunnel.js';
import { receiveBudgetOf, type ReceiveBudget } from '../../../base/receive-budget.js';
import { claimUpgrade, onUpgrade, refuseUpgrade } from '../../../base/upgrades.js';
import { admissionOf, IdleWatch, type WebSocketNodeLimits } from './admission.js';
import { clusterFanout } from './fanout.js';

/** ws (~12 MiB resident with its parsers) loads when a flow first uses a websocket node. */
const ws = lazy<typeof WsModule>('ws');

export interface SessionEvent {
  count: number | '';
  id: string;
  err?: Error;
}

export interface WebSocketEndpoint extends NodeInstance {
  isServer: boolean;
  wholemsg: boolean;
  /** A node uses the endpoint: a client connects at its first user (Node-RED 5), not before. */
  use(): void;
  registerInputNode(node: NodeInstance): void;
  removeInputNode(node: NodeInstance): void;
  broadcast(data: string | Buffer): void;
  reply(id: string, data: string | Buffer): void;
}

/** For a server whose settings did not pass through resolveSettings (a test's bare RED). */
const DEFAULT_LIMITS: WebSocketNodeLimits = { maxConnections: 225, perListener: 225, perAddress: 20, idleTimeout: 300_000, pingInterval: 30_000 };

/** The client's fixed reconnect delay, as in Node-RED. */
const RECONNECT_MS = 3000;
/** How long a closing client connection may take before the node stops anyway. */
const CLOSE_WAIT_MS = 1000;

/** The TCP socket under each accepted connection, to batch the frames one turn of the event loop sends. */
const rawSockets = new WeakMap<WebSocket, net.Socket>();
const corked = new Set<net.Socket>();
const uncorkAll = () => {
  for (const s of corked) s.uncork();
  corked.clear();
};

/**
 * Sends one frame; frames sent to a connection in the same tick (a batch of replies delivered
 * together) leave in one write instead of one system call each.
 */
function sendFrame(ws: WebSocket, data: string | Buffer): void {
  const raw = rawSockets.get(ws);
  if (raw && !corked.has(raw)) {
    raw.cork();
    if (corked.size === 0) process.nextTick(uncorkAll);
    corked.add(raw);
  }
  ws.send(data);
}

interface Listener {
  wss: WebSocketServer;
  /** Connections open or being opened, against webSocketNodeLimits.perListener. */
  open: number;
}

/** Listeners by full path, per HTTP server (several runtimes may share a process). */
const listeners = new WeakMap<Server, Map<string, Listener>>();

function listenersOf(server: Server, limits: WebSocketNodeLimits): Map<string, Listener> {
  let map = listeners.get(server);
  if (!map) {
    const byPath = new Map<string, Listener>();
    const admission = admissionOf(server, limits);
    listeners.set(server, (map = byPath));
    onUpgrade(server, (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
      const listener = byPath.get(pathname);
      // Another upgrade handler (the editor's comms) may own this path: leave the socket alone.
      if (!listener) return;
      const admitted = admission.admit(server, req, listener.open);
      if (typeof admitted === 'string') return refuseUpgrade(socket, 503, 'websocket_limit', admitted, 'Retry-After: 5\r\n');
      claimUpgrade(socket);
      listener.open++;
      socket.once('close', () => {
        listener.open--;
        admitted.release();
      });
      listener.wss.handleUpgrade(req, socket, head, (ws) => {
        if (socket instanceof net.Socket) rawSockets.set(ws, socket);
        countReceived(ws, socket, receiveBudgetOf(server));
        listener.wss.emit('connection', ws, req);
      });
    });
  }
  return map;
}

/**
 * Counts the bytes a connection has received towards a message not yet complete against the
 * server's receive budget (the one request bodies use): ws assembles each message in memory, up to
 * webSocketNodeMaxPayload, so many clients each sending a large message slowly would otherwise
 * hold that much each. Frame headers count too and bytes of a next frame that arrive with the end
 * of a message are not, so the count is right give or take one read. A connection whose next
 * read would pass the budget is closed.
 */
function countReceived(ws: WebSocket, socket: Duplex, budget: ReceiveBudget | undefined): void {
  if (!budget) return;
  let held = 0;
  const release = () => {
    budget.release(held);
    held = 0;
  };
  // Before ws's own listener, so a message completed by this chunk releases the chunk with it.
  socket.prependListener('data', (chunk: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    if (!budget.take(chunk.length)) {
      release();
      ws.terminate();
      return;
    }
    held += chunk.length;
  });
  ws.on('message', release);
  ws.on('close', release);
}

/** `hb` seconds, or 0 for none. */
const heartbeatMs = (hb: unknown) => (parseInt(String(hb ?? '')) > 0 ? parseInt(String(hb)) * 1000 : 0);

export default function (RED: RedApi) {
  function Endpoint(this: WebSocketEndpoint, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const path = String(config.path ?? '');
    const subprotocol = typeof config.subprotocol === 'string' && config.subprotocol ? config.subprotocol.split(',').map((v) => v.trim()) : [];
    node.wholemsg = config.wholemsg === 'true';
    node.isServer = !/^ws{1,2}:\/\//i.test(path);
    const inputs: NodeInstance[] = [];
    const clients = new Map<string, WebSocket>();
    let closing = false;
    let client: WebSocket | undefined;
    let used = false;
    let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
    let heartbeatTimer: ReturnType<typeof setInterval> | undefined;
    const heartbeat = heartbeatMs(config.hb);
    // A larger message closes the connection (1009); Node-RED accepts up to ws's 100 MiB.
    const maxPayload = typeof RED.settings.webSocketNodeMaxPayload === 'number' ? RED.settings.webSocketNodeMaxPayload : 1024 * 1024;
    const limits = (RED.settings.webSocketNodeLimits as WebSocketNodeLimits | undefined) ?? DEFAULT_LIMITS;
    const idle = new IdleWatch(limits);
    // Node-RED's client follows http_proxy/https_proxy/no_proxy (ws:// as http, wss:// as https).
    const selectProxy = proxySelector(RED, {});
    const proxyFor = (url: string) => selectProxy(url.replace(/^ws/i, 'http'));

    node.use = () => {
      if (used || node.isServer) return;
      used = true;
      connect();
    };
    node.registerInputNode = (n) => {
      inputs.push(n);
      node.use();
    };
    node.removeInputNode = (n) => {
      const i = inputs.indexOf(n);
      if (i >= 0) inputs.splice(i, 1);
    };

    function deliver(id: string, data: WebSocket.RawData, isBinary: boolean) {
      // ws 8 hands text frames over as buffers; flows expect strings, as Node-RED's ws 7 gave them.
      const value = isBinary ? (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)) : data.toString();
      let msg: Msg;
      if (node.wholemsg) {
        try {
          const parsed = JSON.parse(value.toString());
          msg = parsed !== null && typeof parsed === 'object' ? parsed : { payload: parsed };
        } catch {
          msg = { payload: value };
        }
      } else msg = { payload: value };
      msg._session = { type: 'websocket', id };
      for (const input of inputs) {
        try {
          input.send(msg);
        } catch (err) {
          node.error(`An error occurred while sending:  ${String(err)}`);
        }
      }
    }

    function reconnectLater() {
      if (closing || node.isServer) return;
      clearTimeout(reconnectTimer);
      reconnectTimer = setTimeout(connect, RECONNECT_MS);
    }

    function track(socket: WebSocket, id: string) {
      let pendingPong = false;
      if (node.isServer) {
        clients.set(id, socket);
        idle.add(socket);
        node.emit('opened', { count: clients.size, id } satisfies SessionEvent);
      }
      socket.on('open', () => {
        if (node.isServer) return;
        if (heartbeat) {
          clearInterval(heartbeatTimer);
          heartbeatTimer = setInterval(() => {
            if (pendingPong) {
              socket.terminate();
              onError(new Error('timeout'));
              return;
            }
            pendingPong = true;
            try {
              socket.ping();
            } catch {
              // the close event that follows reconnects
            }
          }, heartbeat);
        }
        node.emit('opened', { count: '', id } satisfies SessionEvent);
      });
      socket.on('close', () => {
        if (!node.isServer) clearInterval(heartbeatTimer);
        if (node.isServer) {
          clients.delete(id);
          node.emit('closed', { count: clients.size, id } satisfies SessionEvent);
        } else node.emit('closed', { count: '', id } satisfies SessionEvent);
        reconnectLater();
      });
      socket.on('message', (data, isBinary) => deliver(id, data, isBinary));
      const onError = (err: Error) => {
        if (!node.isServer) clearInterval(heartbeatTimer);
        node.emit('erro', { err, id, count: '' } satisfies SessionEvent);
        reconnectLater();
      };
      socket.on('error', onError);
      socket.on('ping', () => (pendingPong = false));
      socket.on('pong', () => (pendingPong = false));
    }

    function upgradeHeaders(): Record<string, string> | undefined {
      const list = config.headers as { keyType: string; keyValue: string; valueType: string; valueValue: string }[] | undefined;
      if (!Array.isArray(list) || list.length === 0) return undefined;
      const headers: Record<string, string> = {};
      for (const h of list) {
        const name = h.keyType === 'other' ? h.keyValue : h.keyType;
        const value = h.valueType === 'other' ? h.valueValue : h.valueType === 'env' ? RED.util.evaluateNodeProperty(h.valueValue, 'env', node, {}) : h.valueType;
        if (name && value) headers[name] = String(value);
      }
      return headers;
    }

    function connect() {
      reconnectTimer = undefined;
      const options: Record<string, unknown> = { maxPayload };
      const tlsNode = config.tls ? (RED.nodes.getNode(String(config.tls)) as TlsConfigNode | null) : null;
      tlsNode?.addTLSOptions(options);
      const headers = upgradeHeaders();
      if (headers) options.headers = headers;
      const proxy = proxyFor(path);
      if (proxy) options.agent = tunnelAgent(proxy, new URL(path), options as never);
      try {
        client = new (ws().WebSocket)(path, subprotocol, options);
      } catch (err) {
        node.error(`An error occurred on the ws connection:  ${String(err)}`);
        return;
      }
      client.setMaxListeners(0);
      track(client, RED.util.generateId());
    }

    let fullPath = '';
    let wss: WebSocketServer | undefined;
    if (node.isServer) {
      const root = String(RED.settings.httpNodeRoot || '/');
      fullPath = root + (root.endsWith('/') ? '' : '/') + (path.startsWith('/') ? path.slice(1) : path);
      const server = RED.server as Server | undefined;
      const byPath = server ? listenersOf(server, limits) : undefined;
      if (byPath?.has(fullPath)) {
        node.error(`Cannot have two WebSocket listeners on the same path: ${path}`);
      } else {
        const verifyClient = RED.settings.webSocketNodeVerifyClient;
        wss = new (ws().WebSocketServer)({ noServer: true, maxPayload, ...(typeof verifyClient === 'function' ? { verifyClient: verifyClient as never } : {}) });
        wss.setMaxListeners(0);
        wss.on('connection', (socket: WebSocket) => track(socket, RED.util.generateId()));
        byPath?.set(fullPath, { wss, open: 0 });
      }
    }

    const broadcastHere = (data: string | Buffer) => {
      const targets = node.isServer ? [...clients.entries()] : client ? [['', client] as const] : [];
      for (const [id, socket] of targets) {
        try {
          sendFrame(socket, data);
          idle.touch(socket);
        } catch (err) {
          node.warn(`An error occurred while sending:  ${id ? `${id} ` : ''}${String(err)}`);
        }
      }
    };
    const replyHere = (id: string, data: string | Buffer) => {
      const socket = clients.get(id);
      if (!socket) return false;
      try {
        sendFrame(socket, data);
        idle.touch(socket);
      } catch {
        // the session went away while the reply was on its way
      }
      return true;
    };
    // A listener's clients may be connected to any instance of a cluster; a client connection is this instance's own.
    const fanout = node.isServer && RED.cluster ? clusterFanout(RED.cluster, node, { broadcast: broadcastHere, reply: replyHere }) : undefined;
    node.broadcast = (data) => {
      broadcastHere(data);
      fanout?.broadcast(data);
    };
    node.reply = (id, data) => {
      if (!replyHere(id, data)) fanout?.reply(id, data);
    };

    node.on('close', (done: () => void) => {
      closing = true;
      fanout?.close();
      clearInterval(heartbeatTimer);
      clearTimeout(reconnectTimer);
      inputs.length = 0;
      if (node.isServer) {
        const server = RED.server as Server | undefined;
        const byPath = server && listenersOf(server, limits);
        if (byPath && wss && byPath.get(fullPath)?.wss === wss) byPath.delete(fullPath);
        idle.stop();
        // ws 8 leaves connections open on close(); Node-RED's ws 7 ended them.
        for (const socket of clients.values()) socket.terminate();
        wss?.close();
        return done();
      }
      const socket = client;
      if (!socket || socket.readyState === socket.CLOSED) return done();
      const timer = setTimeout(() => {
        socket.terminate();
        done();
      }, CLOSE_WAIT_MS);
      socket.once('close', () => {
        clearTimeout(timer);
        done();
      });
      if (socket.readyState === socket.CONNECTING) socket.terminate();
      else socket.close();
    });
  }

  RED.nodes.registerType('websocket-listener', Endpoint as never);
  RED.nodes.registerType('websocket-client', Endpoint as never);
}
