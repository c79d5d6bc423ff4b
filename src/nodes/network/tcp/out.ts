/**
 * `tcp out`: as a client (`beserver: "client"`) writes each payload to host:port, optionally
 * closing after each (`end`); in reply mode writes to the `tcp in` socket of `msg._session` (or all
 * of them), `msg.reset` closing instead; as a server writes to every connected client.
 */
import type net from 'node:net';
import type { DoneFn, Msg, NodeConfig, NodeInstance } from '../../../runtime/red-api/red-api-types.js';
import { keepConnected } from './client.js';
import { connectionsText, createServerFor, tlsNodeOf, toBytes, type TcpContext } from './shared.js';

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
      let writable = false;
      let endedByUs = false;
      const kept = keepConnected(node, host, port, tlsNode, (socket) => {
        socket.on('error', (err) => node.log(`error: ${String(err)}`));
        socket.on('end', () => {
          node.status({});
          writable = false;
        });
        return {
          connected: () => {
            writable = true;
            node.status({ fill: 'green', shape: 'dot', text: 'common.status.connected' });
          },
          closed: () => {
            writable = false;
            node.status({ fill: 'red', shape: 'ring', text: 'common.status.disconnected' });
            socket.destroy();
          },
          reconnectAfter: () => {
            if (!endedByUs) node.log(`connection lost to ${host}:${port}`);
            const delay = endedByUs ? 20 : ctx.reconnectTime;
            endedByUs = false;
            return delay;
          },
        };
      });
      node.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
        const client = kept.socket();
        if (writable && client && msg.payload != null) {
          client.write(toBytes(msg.payload, base64));
          if (doEnd) {
            endedByUs = true;
            node.status({});
            client.end();
          }
        }
        done();
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
