/**
 * `tcp in`: listens on a port (server) or connects to host:port (client, reconnecting after
 * `socketReconnectTime`), and sends what arrives: every chunk (stream), chunks split on a
 * delimiter (stream + utf8 + newline), or everything up to the peer closing (single). Messages carry
 * `msg._session = {type: "tcp", id}` so a `tcp out` in reply mode answers the same socket.
 */
import type net from 'node:net';
import type { Msg, NodeConfig, NodeInstance } from '../../../runtime/red-api/red-api-types.js';
import { keepConnected } from './client.js';
import { connectionsText, createServerFor, tlsNodeOf, unescapeNewline, type TcpContext } from './shared.js';

type Chunk = string | Buffer;

/** Collects one connection's bytes into messages according to the node's mode. */
function framer(node: NodeInstance, opts: { stream: boolean; datatype: string; newline: string; trim: boolean; topic: unknown }, base: () => Msg) {
  let buffer: Chunk = opts.datatype === 'buffer' ? Buffer.alloc(0) : '';
  const splitting = () => opts.stream && opts.datatype === 'utf8' && opts.newline !== '';
  return {
    data(raw: Buffer) {
      const data: Chunk = opts.datatype === 'buffer' ? raw : raw.toString(opts.datatype as BufferEncoding);
      if (splitting()) {
        buffer = (buffer as string) + data;
        const parts = (buffer as string).split(opts.newline);
        for (let i = 0; i < parts.length - 1; i++) node.send({ topic: opts.topic, payload: opts.trim ? parts[i] + opts.newline : parts[i], ...base() });
        buffer = parts[parts.length - 1];
      } else if (opts.stream) node.send({ topic: opts.topic, payload: data, ...base() });
      else buffer = typeof data === 'string' ? (buffer as string) + data : Buffer.concat([buffer as Buffer, data]);
    },
    /** The peer closed: single mode sends what it collected, delimiter mode the unterminated rest. */
    end(): boolean {
      const rest = buffer;
      buffer = opts.datatype === 'buffer' ? Buffer.alloc(0) : '';
      if ((!opts.stream || splitting()) && rest.length > 0) {
        node.send({ topic: opts.topic, payload: rest, ...base() });
        return true;
      }
      return false;
    },
  };
}

export default function (ctx: TcpContext) {
  const { RED, pool } = ctx;
  function TcpIn(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const host = String(config.host ?? '');
    const port = Number(config.port);
    const opts = {
      topic: config.topic,
      stream: !config.datamode || config.datamode === 'stream',
      datatype: (config.datatype as string) || 'buffer',
      newline: unescapeNewline(config.newline),
      trim: config.trim === true,
    };
    const isServer = typeof config.server === 'boolean' ? config.server : config.server === 'server';
    const tlsNode = tlsNodeOf(RED, config.tls);
    let closing = false;

    if (!isServer) {
      keepConnected(node, host, port, tlsNode, (socket) => {
        const id = RED.util.generateId();
        const session = () => ({ _session: { type: 'tcp', id } });
        const frames = framer(node, opts, session);
        let gotSomething = false;
        pool.set(id, socket);
        socket.on('data', (d: Buffer) => frames.data(d));
        socket.on('end', () => (gotSomething = frames.end()));
        socket.on('error', (err) => node.log(String(err)));
        return {
          connected: () => node.status({ fill: 'green', shape: 'dot', text: 'common.status.connected', _session: { type: 'tcp', id } } as never),
          closed: () => {
            pool.delete(id);
            node.status({ fill: 'red', shape: 'ring', text: 'common.status.disconnected', _session: { type: 'tcp', id } } as never);
          },
          reconnectAfter: () => {
            if (!gotSomething) node.log(`connection lost to ${host}:${port}`);
            // A peer that closed after sending something gets asked again at once, as in Node-RED.
            return gotSomething ? 20 : ctx.reconnectTime;
          },
        };
      });
      return;
    }

    const sockets = new Set<net.Socket>();
    const server = createServerFor(tlsNode, (socket) => {
      socket.setKeepAlive(true, 120000);
      if (ctx.socketTimeout !== null) socket.setTimeout(ctx.socketTimeout);
      const id = RED.util.generateId();
      const ip = socket.remoteAddress;
      const rport = socket.remotePort;
      pool.set(id, socket);
      sockets.add(socket);
      const event = (name: string) => ({ text: connectionsText(sockets.size), event: name, ip, port: rport, _session: { type: 'tcp', id } });
      node.status(event('connect') as never);
      const frames = framer(node, opts, () => ({ ip, port: rport, _session: { type: 'tcp', id } }));
      socket.on('data', (d: Buffer) => frames.data(d));
      socket.on('end', () => frames.end());
      socket.on('timeout', () => {
        node.log(`timeout closed socket port ${port}`);
        socket.end();
      });
      socket.on('close', () => {
        pool.delete(id);
        sockets.delete(socket);
        if (!closing) node.status(event('disconnect') as never);
      });
      socket.on('error', (err) => node.log(String(err)));
    });
    server.on('error', (err) => node.error(`unable to listen on port ${port}, error: ${String(err)}`));
    server.listen(port, () => node.log(`listening on port ${port}`));
    node.on('close', (done: () => void) => {
      closing = true;
      for (const s of sockets) s.destroy();
      server.close(() => done());
      node.log(`stopped listening on port ${port}`);
    });
  }
  RED.nodes.registerType('tcp in', TcpIn as never);
}
