/**
 * `tcp request`: writes `msg.payload` to host:port (the node's, else `msg.host`/`msg.port`) and
 * answers with what comes back, per connection: after `splitc` ms of the first byte (`time`), after
 * `splitc` bytes (`count`), up to and including the character `splitc` (`char`), never (`immed`:
 * send and close), or every chunk while staying connected (`sit`, where `msg.reset` closes). The
 * answer is a copy of the last message sent on that connection with the reply as payload.
 */
import type net from 'node:net';
import type { DoneFn, Msg, NodeConfig, NodeInstance, SendFn } from '../../../runtime/red-api/red-api-types.js';
import { connectTo, connectionsText, tlsNodeOf, type TcpContext } from './shared.js';

interface Pending {
  msg: Msg;
  done: DoneFn;
}

interface Connection {
  socket: net.Socket;
  connected: boolean;
  queue: Pending[];
  lastMsg: Msg;
  send: SendFn;
  collected: Buffer[];
  size: number;
  chunk: string;
  timer?: ReturnType<typeof setTimeout>;
}

/** The delimiter byte of `char` mode: `\n`-style escapes, `0x..` hex, or the first character. */
function delimiterOf(text: string): number {
  const escapes: Record<string, number> = { '\\n': 0x0a, '\\r': 0x0d, '\\t': 0x09, '\\e': 0x1b, '\\f': 0x0c, '\\0': 0x00 };
  if (text in escapes) return escapes[text];
  if (text.startsWith('0x')) return parseInt(text);
  return text.charCodeAt(0);
}

export default function (ctx: TcpContext) {
  const { RED } = ctx;
  function TcpRequest(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    let out = String(config.out ?? 'time');
    let split: number;
    if (out === 'immed') {
      out = 'time';
      split = -1;
    } else split = out === 'char' ? delimiterOf(String(config.splitc ?? '')) : Number(config.splitc);
    const asString = (config.ret || 'buffer') === 'string';
    const newline = String(config.newline ?? '').replace('\\n', '\n').replace('\\r', '\r').replace('\\t', '\t');
    const trim = config.trim === true;
    const tlsNode = tlsNodeOf(RED, config.tls);
    const connections = new Map<string, Connection>();
    let lastId: string | undefined;

    const reply = (c: Connection, payload: Buffer | string) => {
      const msg = RED.util.cloneMessage(c.lastMsg);
      msg.payload = payload;
      c.send(msg);
    };
    const finish = (id: string, c: Connection) => {
      const data = Buffer.concat(c.collected, c.size);
      reply(c, asString ? data.toString() : data);
      node.status({});
      c.socket.destroy();
      connections.delete(id);
    };

    function onData(id: string, c: Connection, data: Buffer) {
      if (connections.get(id) !== c) return;
      if (out === 'sit') {
        if (!asString) return reply(c, Buffer.from(data));
        if (!newline) return reply(c, data.toString());
        c.chunk += data.toString();
        const parts = c.chunk.split(newline);
        for (let p = 0; p < parts.length - 1; p++) reply(c, trim ? parts[p] + newline : parts[p]);
        c.chunk = parts[parts.length - 1];
        return;
      }
      if (out === 'time') {
        c.collected.push(data);
        c.size += data.length;
        c.timer ??= setTimeout(() => connections.get(id) === c && finish(id, c), split);
        return;
      }
      for (let j = 0; j < data.length; j++) {
        const byte = data[j];
        c.collected.push(data.subarray(j, j + 1));
        c.size += 1;
        if ((out === 'count' && c.size >= Math.max(split, 1)) || (out === 'char' && byte === split)) return finish(id, c);
      }
    }

    function open(id: string, host: string, port: number, c: Omit<Connection, 'socket'>): void {
      const socket = connectTo(port, host, tlsNode, () => {
        const conn = connections.get(id);
        if (!conn || conn.socket !== socket) return;
        node.status({ fill: 'green', shape: 'dot', text: connectionsText(connections.size) });
        conn.connected = true;
        for (const p of conn.queue.splice(0)) {
          if (p.msg.payload !== undefined) socket.write(p.msg.payload);
          p.done();
        }
        if (out === 'time' && split < 0) {
          socket.end();
          connections.delete(id);
          node.status({});
        }
      });
      if (ctx.socketTimeout !== null) socket.setTimeout(ctx.socketTimeout);
      const conn: Connection = { ...c, socket };
      connections.set(id, conn);
      socket.on('data', (d: Buffer) => onData(id, conn, d));
      socket.on('end', () => {
        node.status({ fill: 'grey', shape: 'ring', text: 'common.status.disconnected' });
        conn.connected = false;
      });
      socket.on('close', () => {
        conn.connected = false;
        clearTimeout(conn.timer);
        if (connections.get(id) === conn) connections.delete(id);
      });
      socket.on('error', () => {
        node.status({ fill: 'red', shape: 'ring', text: 'common.status.error' });
        node.error(`connect failed ${id}`, conn.lastMsg);
        for (const p of conn.queue.splice(0)) p.done();
        socket.destroy();
        if (connections.get(id) === conn) connections.delete(id);
      });
      socket.on('timeout', () => {
        node.status({ fill: 'grey', shape: 'dot', text: 'tcpin.errors.connect-timeout' });
        socket.destroy();
      });
    }

    node.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
      if (msg.payload !== undefined && !Buffer.isBuffer(msg.payload) && typeof msg.payload !== 'string') msg.payload = String(msg.payload);
      const host = (config.server as string) || msg.host;
      const port = Number(config.port) || msg.port;
      if (out === 'sit' && msg.reset) {
        for (const [id, c] of connections) {
          if (msg.reset === true || msg.reset === id) {
            c.socket.destroy();
            connections.delete(id);
          }
        }
        node.status({ fill: 'green', shape: connections.size === 0 ? 'ring' : 'dot', text: connectionsText(connections.size) });
        if (!Object.prototype.hasOwnProperty.call(msg, 'payload')) return done();
      }
      const id = `${host}:${port}`;
      if (id !== lastId) {
        node.status({});
        lastId = id;
      }
      const existing = connections.get(id);
      if (existing) {
        existing.lastMsg = msg;
        existing.send = send;
        if (!existing.connected) {
          if (existing.queue.length >= ctx.queueSize) existing.queue.shift()?.done();
          existing.queue.push({ msg, done });
          return;
        }
        if (msg.payload !== undefined) existing.socket.write(msg.payload);
        return done();
      }
      if (!host || !port) {
        node.warn('Host and/or port not set');
        return done();
      }
      open(id, host, port, { connected: false, queue: [{ msg, done }], lastMsg: msg, send, collected: [], size: 0, chunk: '' });
    });

    node.on('close', (done: () => void) => {
      for (const c of connections.values()) {
        clearTimeout(c.timer);
        c.socket.destroy();
      }
      connections.clear();
      node.status({});
      done();
    });
  }
  RED.nodes.registerType('tcp request', TcpRequest as never);
}
