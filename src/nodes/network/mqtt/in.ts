/**
 * `mqtt in`: subscribes to a fixed topic, or (with `inputs: 1`) to whatever `msg.action`
 * (`subscribe`, `unsubscribe`, `getSubscriptions`, `connect`, `disconnect`) asks for, and sends
 * `{topic, payload, qos, retain}` plus the MQTT 5 properties of each message received.
 */
import type { DoneFn, Msg, NodeConfig, NodeInstance, RedApi, SendFn } from '../../../runtime/red-api/red-api-types.js';
import { STATUS, type MqttBrokerNode } from './broker.js';
import { connectAction, disconnectAction } from './actions.js';
import { PayloadError, decodePayload, setBoolProp, setBufferProp, setIntProp, setStrProp, setUserProperties } from './properties.js';
import { isValidSubscriptionTopic } from './topic.js';

type Bag = Record<string, any>;
const ACTIONS = new Set(['connect', 'disconnect', 'subscribe', 'unsubscribe', 'getSubscriptions']);

export default function (RED: RedApi) {
  function MqttIn(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const dynamic = config.inputs == 1;
    const topic = config.topic as string;
    let qos = parseInt(config.qos as string);
    if (isNaN(qos) || qos < 0 || qos > 2) qos = 2;
    const datatype = (config.datatype as string) || 'utf8';
    let broker = RED.nodes.getNode(String(config.broker)) as MqttBrokerNode | null;
    const dynamicSubs: Record<string, Bag> = {};

    if (!dynamic && !isValidSubscriptionTopic(topic)) {
      node.warn('Invalid topic specified');
      return;
    }
    if (!broker) {
      node.error('missing broker configuration');
      return;
    }
    const conn = broker;

    const handler = (type: string) => (mtopic: string, payload: Buffer, packet: Bag) => {
      const msg: Msg = { topic: mtopic, payload: null, qos: packet.qos, retain: packet.retain };
      const v5 = conn.v5();
      if (v5 && packet.properties) {
        const p = packet.properties;
        setStrProp(p, msg, 'responseTopic');
        setBufferProp(p, msg, 'correlationData');
        setStrProp(p, msg, 'contentType');
        setIntProp(p, msg, 'messageExpiryInterval', 0);
        setBoolProp(p, msg, 'payloadFormatIndicator');
        setStrProp(p, msg, 'reasonString');
        setUserProperties(p.userProperties, msg);
      }
      try {
        msg.payload = decodePayload(type, payload, v5, msg);
      } catch (err) {
        if (!(err instanceof PayloadError)) throw err;
        node.error(err.message, { payload, topic: mtopic, qos: packet.qos, retain: packet.retain });
        return;
      }
      // Node-RED marks messages from a broker on this machine with the topic they arrived on.
      if (conn.broker === 'localhost' || conn.broker === '127.0.0.1') msg._topic = mtopic;
      node.send(msg);
    };

    node.status(STATUS.disconnected);
    if (topic || dynamic) {
      conn.register(node);
      if (!dynamic) {
        const options: Bag = { qos };
        if (conn.v5()) {
          setIntProp(config, options, 'rh', 0, 2, 0);
          if (config.nl === 'true' || config.nl === true) options.nl = true;
          else if (config.nl === 'false' || config.nl === false) options.nl = false;
          if (config.rap === 'true' || config.rap === true) options.rap = true;
          else if (config.rap === 'false' || config.rap === false) options.rap = false;
        }
        conn.subscribe(topic, options, handler(datatype), node.id);
      }
    } else node.error('topic not defined');

    node.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
      const action = msg.action;
      if (!ACTIONS.has(action)) return done(new Error('Invalid action specified'));
      if (action === 'connect') return connectAction(conn, msg, done);
      if (action === 'disconnect') return disconnectAction(conn, done);
      if (action === 'getSubscriptions') {
        msg.topic = 'subscriptions';
        msg.payload = Object.values(dynamicSubs);
        send(msg);
        return done();
      }
      let list: unknown[];
      if (action === 'unsubscribe' && msg.topic === true) list = Object.values(dynamicSubs);
      else if (Array.isArray(msg.topic)) list = msg.topic;
      else if (typeof msg.topic === 'string' || (typeof msg.topic === 'object' && msg.topic !== null)) list = [msg.topic];
      else return done(new Error('msg.topic is missing or invalid'));
      const subs: Bag[] = [];
      for (const item of list) {
        const sub: Bag = typeof item === 'string' ? { topic: item } : (item as Bag);
        if (!sub?.topic || !isValidSubscriptionTopic(sub.topic)) return done(new Error('Invalid topic specified'));
        subs.push(sub);
      }
      const v5 = conn.v5();
      for (const sub of subs) {
        if (action === 'unsubscribe' || dynamicSubs[sub.topic]) {
          conn.unsubscribe(sub.topic, node.id, true);
          delete dynamicSubs[sub.topic];
        }
        if (action === 'unsubscribe') continue;
        const options: Bag = {};
        setIntProp(sub, options, 'qos', 0, 2, 2);
        sub.qos = options.qos;
        if (v5) {
          setIntProp(sub, options, 'rh', 0, 2, 0);
          sub.rh = options.rh;
          setBoolProp(sub, options, 'rap', true);
          sub.rap = options.rap;
          if (sub.nl === 'true' || sub.nl === true) options.nl = sub.nl = true;
          else if (sub.nl === 'false' || sub.nl === false) options.nl = sub.nl = false;
          else delete sub.nl;
        }
        conn.subscribe(sub.topic, options, handler(sub.datatype || datatype), node.id);
        dynamicSubs[sub.topic] = sub;
      }
      msg.subscriptions = Object.values(dynamicSubs);
      done();
    });

    node.on('close', (removed: boolean, done: () => void) => {
      if (!broker) return done();
      if (dynamic) for (const t of Object.keys(dynamicSubs)) conn.unsubscribe(t, node.id, removed);
      else conn.unsubscribe(topic, node.id, removed);
      broker = null;
      conn.deregister(node, done, removed);
    });
  }

  RED.nodes.registerType('mqtt in', MqttIn as never);
}
