/**
 * `websocket in` sends what its listener or client receives; `websocket out` sends `msg.payload`
 * (or the whole message as JSON when the endpoint says so) to the message's session, or to every
 * connection. Both show the endpoint's connection count in their status.
 */
import type { DoneFn, Msg, NodeConfig, NodeInstance, RedApi } from '../../../runtime/red-api/red-api-types.js';
import type { SessionEvent, WebSocketEndpoint } from './endpoint.js';

/** Mirrors the endpoint's connection events in `node`'s status, with Node-RED's `event` and `_session`. */
function followStatus(node: NodeInstance, endpoint: WebSocketEndpoint): () => void {
  const session = (e: SessionEvent) => ({ type: 'websocket', id: e.id });
  const opened = (e: SessionEvent) => node.status({ fill: 'green', shape: 'dot', text: `connected ${e.count}`, event: 'connect', _session: session(e) } as never);
  const erro = (e: SessionEvent) => node.status({ fill: 'red', shape: 'ring', text: 'common.status.error', event: 'error', _session: session(e) } as never);
  const closed = (e: SessionEvent) =>
    node.status({
      ...(typeof e.count === 'number' && e.count > 0 ? { fill: 'green', shape: 'dot', text: `connected ${e.count}` } : { fill: 'red', shape: 'ring', text: 'common.status.disconnected' }),
      event: 'disconnect',
      _session: session(e),
    } as never);
  endpoint.on('opened', opened);
  endpoint.on('erro', erro);
  endpoint.on('closed', closed);
  return () => {
    endpoint.off('opened', opened);
    endpoint.off('erro', erro);
    endpoint.off('closed', closed);
  };
}

export default function (RED: RedApi) {
  const endpointOf = (config: NodeConfig) => RED.nodes.getNode(String(config.client ? config.client : config.server)) as WebSocketEndpoint | null;

  function WebSocketIn(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const endpoint = endpointOf(config);
    if (!endpoint) {
      this.error('Missing server configuration');
      return;
    }
    endpoint.registerInputNode(this);
    const unfollow = followStatus(this, endpoint);
    this.on('close', () => {
      endpoint.removeInputNode(this);
      unfollow();
      this.status({});
    });
  }

  function WebSocketOut(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const endpoint = endpointOf(config);
    if (!endpoint) {
      this.error('Missing server configuration');
      return;
    }
    const unfollow = followStatus(this, endpoint);
    endpoint.use();
    this.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
      let payload: string | Buffer | undefined;
      if (endpoint.wholemsg) {
        const { _session, ...rest } = msg;
        void _session;
        payload = JSON.stringify(rest);
      } else if (Object.prototype.hasOwnProperty.call(msg, 'payload')) {
        payload = Buffer.isBuffer(msg.payload) ? msg.payload : RED.util.ensureString(msg.payload);
      }
      if (payload) {
        if (msg._session?.type === 'websocket') endpoint.reply(msg._session.id, payload);
        else endpoint.broadcast(payload);
      }
      done();
    });
    this.on('close', () => {
      unfollow();
      this.status({});
    });
  }

  RED.nodes.registerType('websocket in', WebSocketIn as never);
  RED.nodes.registerType('websocket out', WebSocketOut as never);
}
