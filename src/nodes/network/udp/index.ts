/**
 * Node-RED's UDP node set. `udp in` binds a port (IPv4 or IPv6, optionally joining a multicast
 * group on an interface) and sends each datagram as `{payload, fromip, ip, port}`; `udp out` sends
 * `msg.payload` to the node's address and port (else `msg.ip`/`msg.port`), unicast, broadcast or
 * multicast. Sockets are shared by port between the two, as in Node-RED, and `GET /udp-ports/:id`
 * lists the ports in use for the editor.
 *
 * Beyond Node-RED: a multicast or broadcast `udp out` with an interface also sends through that
 * interface (Node-RED only joins the group there), so a group on the loopback interface works.
 */
import dgram from 'node:dgram';
import os from 'node:os';
import type { DoneFn, Msg, NodeConfig, NodeInstance, RedApi } from '../../../runtime/red-api/red-api-types.js';

/** An interface name (`eth0`) becomes its address for the IP version; an address stays as it is. */
function interfaceAddress(node: NodeInstance, iface: string | null, ipv: string): string | null {
  if (!iface || iface.includes('.') || iface.includes(':')) return iface;
  const family = ipv === 'udp6' ? 'IPv6' : 'IPv4';
  const found = os.networkInterfaces()[iface]?.find((a) => a.family === family);
  if (!found) {
    node.warn(`udp: interface ${iface} not found`);
    return null;
  }
  return found.address;
}

function membershipError(node: NodeInstance, err: NodeJS.ErrnoException): void {
  if (err.code === 'EINVAL') node.error('Bad Multicast Address');
  else if (err.code === 'ENODEV') node.error('Must be ip address of the required interface');
  else node.error(`error: ${err.code ?? err.message}`);
}

export default function (RED: RedApi) {
  /** Sockets by port, shared between udp in and udp out nodes of this runtime. */
  const ports = new Map<string, dgram.Socket>();

  RED.httpAdmin?.get('/udp-ports/:id', RED.auth.needsPermission('udp-ports.read'), (_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify([...ports.keys()]));
  });

  function UdpIn(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const port = String(config.port ?? '');
    const ipv = (config.ipv as string) || 'udp4';
    const multicast = config.multicast === 'true';
    const group = config.group as string;
    const datatype = config.datatype as string;
    const iface = interfaceAddress(node, (config.iface as string) || null, ipv);
    let socket = ports.get(port);
    const owner = !socket;
    if (!socket) {
      const s = dgram.createSocket({ type: ipv as dgram.SocketType, reuseAddr: true });
      socket = s;
      s.bind(Number(port), () => {
        if (!multicast) return;
        s.setBroadcast(true);
        s.setMulticastLoopback(false);
        try {
          s.setMulticastTTL(128);
          s.addMembership(group, iface ?? undefined);
          if (iface) node.status({ text: `${config.iface} : ${iface}` });
          node.log(`udp multicast group ${group}`);
        } catch (err) {
          membershipError(node, err as NodeJS.ErrnoException);
        }
      });
      ports.set(port, s);
    } else {
      node.log(`udp: port ${port} already in use`);
      if (iface) node.status({ text: `${config.iface} : ${iface}` });
    }
    const sock = socket;
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EACCES' && Number(port) < 1024) node.error('UDP access error, you may need root access for ports below 1024');
      else node.error(`error: ${err.code}`);
      sock.close();
    };
    const onMessage = (message: Buffer, remote: dgram.RemoteInfo) => {
      const payload = datatype === 'base64' ? message.toString('base64') : datatype === 'utf8' ? message.toString('utf8') : message;
      node.send({ payload, fromip: `${remote.address}:${remote.port}`, ip: remote.address, port: remote.port });
    };
    sock.on('error', onError);
    sock.on('message', onMessage);
    sock.on('listening', () => {
      const address = sock.address();
      node.log(`udp listener at ${iface || address.address}:${address.port}`);
    });
    node.on('close', () => {
      sock.off('message', onMessage);
      sock.off('error', onError);
      try {
        if (multicast && owner) sock.dropMembership(group, iface ?? undefined);
      } catch {
        // the membership was never made (bad group): nothing to drop
      }
      if (ports.get(port) === sock) {
        ports.delete(port);
        try {
          sock.close();
        } catch {
          // already closed after an error
        }
      }
      node.status({});
    });
  }

  function UdpOut(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const outport = String(config.outport ?? '');
    const base64 = config.base64 === true;
    const addr = config.addr as string;
    const ipv = (config.ipv as string) || 'udp4';
    const multicast = String(config.multicast ?? 'false');
    const iface = interfaceAddress(node, (config.iface as string) || null, ipv);
    const key = outport || String(config.port || '0');
    let ready: Promise<dgram.Socket> | undefined;
    let own: dgram.Socket | undefined;

    /** The socket is made on first use, so a udp in on the same port in this deploy can lend its own. */
    function socket(): Promise<dgram.Socket> {
      return (ready ??= new Promise((resolve) => {
        const shared = key !== '0' ? ports.get(key) : undefined;
        if (shared) {
          const lend = () => {
            if (multicast !== 'false') {
              shared.setBroadcast(true);
              shared.setMulticastLoopback(false);
              if (iface) shared.setMulticastInterface(iface);
            }
            if (iface) node.status({ text: `${config.iface} : ${iface}` });
            resolve(shared);
          };
          // The lending udp in may still be binding.
          try {
            shared.address();
          } catch {
            return void shared.once('listening', lend);
          }
          return lend();
        }
        const s = dgram.createSocket({ type: ipv as dgram.SocketType, reuseAddr: true });
        own = s;
        // Errors also reach the send callback; without a listener they would end the process.
        s.on('error', () => {});
        ports.set(key, s);
        if (multicast === 'false') {
          if (outport) s.bind(Number(outport), () => resolve(s));
          else resolve(s);
          return;
        }
        s.bind(outport ? Number(outport) : 0, () => {
          s.setBroadcast(true);
          s.setMulticastLoopback(false);
          if (iface) s.setMulticastInterface(iface);
          if (multicast === 'multi') {
            try {
              s.setMulticastTTL(128);
              s.addMembership(addr, iface ?? undefined);
              if (iface) node.status({ text: `${config.iface} : ${iface}` });
            } catch (err) {
              membershipError(node, err as NodeJS.ErrnoException);
            }
          }
          resolve(s);
        });
      }));
    }

    node.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
      if (!Object.prototype.hasOwnProperty.call(msg, 'payload')) return done();
      const host = addr || msg.ip || '';
      const port = Number(config.port || msg.port || 0);
      if (host === '') {
        node.warn('udp: ip address not set');
        return done();
      }
      if (port === 0) {
        node.warn('udp: port not set');
        return done();
      }
      if (isNaN(port) || port < 1 || port > 65535) {
        node.warn('udp: port number not valid');
        return done();
      }
      const message = base64 ? Buffer.from(String(msg.payload), 'base64') : Buffer.isBuffer(msg.payload) ? msg.payload : Buffer.from(String(msg.payload));
      void socket().then((s) =>
        s.send(message, 0, message.length, port, host, (err) => {
          if (err) node.error(`udp : ${String(err)}`, msg);
          done();
        }),
      );
    });
    node.on('close', () => {
      if (own) {
        try {
          if (multicast === 'multi') own.dropMembership(addr, iface ?? undefined);
        } catch {
          // never joined
        }
        own.close();
        if (ports.get(key) === own) ports.delete(key);
      }
      node.status({});
    });
  }

  RED.nodes.registerType('udp in', UdpIn as never);
  RED.nodes.registerType('udp out', UdpOut as never);
}
