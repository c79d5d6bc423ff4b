/** What the TCP nodes share: the open sockets by session id, settings, and how payloads become bytes. */
import net from 'node:net';
import tls from 'node:tls';
import type { RedApi } from '../../../runtime/red-api/red-api-types.js';
import type { TlsConfigNode } from '../tls/tls.js';

export interface TcpContext {
  RED: RedApi;
  /** Every socket `tcp in` opened or accepted, by `msg._session.id`, so `tcp out` can reply. */
  pool: Map<string, net.Socket>;
  reconnectTime: number;
  socketTimeout: number | null;
  queueSize: number;
}

export function tcpContext(RED: RedApi): TcpContext {
  const s = RED.settings as Record<string, unknown>;
  return {
    RED,
    pool: new Map(),
    reconnectTime: Number(s.socketReconnectTime) || 10000,
    socketTimeout: s.socketTimeout ? Number(s.socketTimeout) : null,
    queueSize: Number(s.tcpMsgQueueSize) || 1000,
  };
}

/** `\n`, `\r`, `\t` typed in the editor as two characters become the characters. */
export const unescapeNewline = (text: unknown): string =>
  String(text ?? '').replace(/\\n/g, '\n').replace(/\\r/g, '\r').replace(/\\t/g, '\t');

/** The bytes a payload is written as: buffers as they are, base64 text decoded when asked, anything else as text. */
export function toBytes(payload: unknown, base64: boolean): Buffer {
  if (Buffer.isBuffer(payload)) return payload;
  if (typeof payload === 'string' && base64) return Buffer.from(payload, 'base64');
  return Buffer.from(String(payload));
}

export function tlsNodeOf(RED: RedApi, id: unknown): TlsConfigNode | null {
  return id ? (RED.nodes.getNode(String(id)) as TlsConfigNode | null) : null;
}

/** Connects to host:port, over TLS when a tls-config node is given. */
export function connectTo(port: number, host: string, tlsNode: TlsConfigNode | null, onConnect: () => void): net.Socket {
  if (tlsNode) return tls.connect(port, tlsNode.addTLSOptions({ host }) as tls.ConnectionOptions, onConnect);
  return net.connect(port, host, onConnect);
}

export function createServerFor(tlsNode: TlsConfigNode | null, onSocket: (socket: net.Socket) => void): net.Server {
  return tlsNode ? tls.createServer(tlsNode.addTLSOptions({}) as tls.TlsOptions, onSocket) : net.createServer(onSocket);
}

export const connectionsText = (count: number) => `${count} connection${count === 1 ? '' : 's'}`;
