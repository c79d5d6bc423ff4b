/**
 * `tcp out`: as a client (`beserver: "client"`) writes each payload to host:port, optionally
 * closing after each (`end`); in reply mode writes to the `tcp in` socket of `msg._session` (or all
 * of them), `msg.reset` closing instead; as a server writes to every connected client.
 */
import type net from 'node:net';
import type { DoneFn, Msg, NodeConfig, NodeInstance } from '../../../runtime/red-api-types.js';
import { connectTo, connectionsText, createServerFor, tlsNodeOf, toBytes, type TcpContext } from './shared.js';

export default function (ctx: TcpContext) {
  const { RED, pool } = ctx;
  function TcpOut(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const host = String(config.host ?? '');
    const port = Number(config.port);
    const base64 = config.base64 === true;
    const doEnd = config.end === true;
    const mode = (config.beserver as string) || 'client';
    const tlsNode = tlsNodeOf(RED, config.tls);

    if (mode === 'reply') {
      node.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
        const targets = msg._session?.type === 'tcp' ? [pool.get(msg._session.id)].filter((s): s is net.Socket => !!s) : [...pool.values()];
        for (const socket of targets) {
          if (msg.reset === true) socket.destroy();
          else socket.write(toBytes(msg.payload, base64));
        }
        done();
      });
      return;
    }

    if (mode === 'client') {
      let client: net.Socket | undefined;
      let connected = false;
      let closing = false;
      let endedByUs = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onClosed: (() => void) | undefined;
      const connect = () => {
        node.log(`connecting to ${host}:${port}`);
        node.status({ fill: 'grey', shape: 'dot', text: 'common.status.connecting' });
        const socket = connectTo(port, host, tlsNode, () => {
          connected = true;
          node.log(`connected to ${host}:${port}`);
          node.status({ fill: 'green', shape: 'dot', text: 'common.status.connected' });
        });
        client = socket;
        socket.setKeepAlive(true, 120000);
        socket.on('error', (err) => node.log(`error: ${String(err)}`));
        socket.on('end', () => {
          node.status({});
          connected = false;
        });
        socket.on('close', () => {
          node.status({ fill: 'red', shape: 'ring', text: 'common.status.disconnected' });
          connected = false;
          socket.destroy();
          if (closing) return onClosed?.();
          if (!endedByUs) node.log(`connection lost to ${host}:${port}`);
          timer = setTimeout(connect, endedByUs ? 20 : ctx.reconnectTime);
          endedByUs = false;
        });
      };
      connect();
      node.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
        if (connected && client && msg.payload != null) {
          client.write(toBytes(msg.payload, base64));
          if (doEnd) {
            endedByUs = true;
            node.status({});
            client.end();
          }
        }
        done();
      });
      node.on('close', (done: () => void) => {
        closing = true;
        clearTimeout(timer);
        if (!connected || !client) return done();
        onClosed = done;
        client.destroy();
      });
      return;
    }

    const sockets = new Set<net.Socket>();
    const show = () => node.status({ text: connectionsText(sockets.size) });
    show();
    const server = createServerFor(tlsNode, (socket) => {
      socket.setKeepAlive(true, 120000);
      if (ctx.socketTimeout !== null) socket.setTimeout(ctx.socketTimeout);
      node.log(`connection from ${socket.remoteAddress}:${socket.remotePort}`);
      socket.on('timeout', () => socket.end());
      const gone = () => {
        if (sockets.delete(socket)) show();
      };
      socket.on('close', gone);
      socket.on('error', gone);
      sockets.add(socket);
      show();
    });
    server.on('error', (err) => node.error(`unable to listen on port ${port}, error: ${String(err)}`));
    server.listen(port, () => node.log(`listening on port ${port}`));
    node.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
      if (msg.payload != null) {
        const bytes = toBytes(msg.payload, base64);
        for (const s of sockets) {
          if (doEnd) s.end(bytes);
          else s.write(bytes);
        }
      }
      done();
    });
    node.on('close', (done: () => void) => {
      for (const s of sockets) s.destroy();
      server.close(() => done());
    });
  }
  RED.nodes.registerType('tcp out', TcpOut as never);
}
