/**
 * `mqtt out`: publishes `msg.payload` to `msg.topic` (the node's own topic, QoS, retain and MQTT 5
 * properties win when set), or runs a `connect` / `disconnect` action.
 */
import type { DoneFn, Msg, NodeConfig, NodeInstance, RedApi } from '../../../runtime/red-api/red-api-types.js';
import { STATUS, type MqttBrokerNode } from './broker.js';
import { connectAction, disconnectAction } from './actions.js';
import { parseUserProperties } from './properties.js';

export default function (RED: RedApi) {
  function MqttOut(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const topic = config.topic as string | undefined;
    const qos = config.qos || null;
    const retain = config.retain;
    const v5Props: Record<string, unknown> = {
      responseTopic: config.respTopic,
      correlationData: config.correl,
      contentType: config.contentType,
      messageExpiryInterval: config.expiry,
      userProperties: parseUserProperties(config.userProps),
    };
    let broker = RED.nodes.getNode(String(config.broker)) as MqttBrokerNode | null;
    if (!broker) {
      node.error('missing broker configuration');
      return;
    }
    const conn = broker;

    function publish(msg: Msg, done: DoneFn) {
      if (msg.qos) {
        msg.qos = parseInt(msg.qos);
        if (msg.qos !== 0 && msg.qos !== 1 && msg.qos !== 2) msg.qos = null;
      }
      if (topic) msg.topic = topic;
      msg.qos = Number(qos || msg.qos || 0);
      const r = retain || msg.retain || false;
      msg.retain = r === true || r === 'true';
      if (conn.v5()) for (const [k, v] of Object.entries(v5Props)) if (v) msg[k] = v;
      if (!Object.prototype.hasOwnProperty.call(msg, 'payload')) return done();
      conn.publish(msg, (err) => {
        if (err && (err as { warn?: boolean }).warn) {
          node.warn((err as Error).message);
          return done();
        }
        done(err);
      });
    }

    node.status(STATUS.disconnected);
    node.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
      if (!msg.action) return publish(msg, done);
      if (msg.action === 'connect') return connectAction(conn, msg, done);
      if (msg.action === 'disconnect') return disconnectAction(conn, done);
      done(new Error('Invalid action specified'));
    });
    conn.register(node);
    node.on('close', (removed: boolean, done: () => void) => {
      if (!broker) return done();
      broker = null;
      conn.deregister(node, done, removed);
    });
  }

  RED.nodes.registerType('mqtt out', MqttOut as never);
}
