/**
 * `mqtt-broker`: one MQTT.js client shared by the `mqtt in` and `mqtt out` nodes that name it. It
 * connects when its first user registers (unless `autoConnect` is off), keeps every subscription
 * and renews them after each (re)connect, publishes birth and close messages, and keeps Node-RED's
 * method names (`register`, `subscribe(topic, options, callback, ref)`, `publish(msg, done)`, …)
 * because contributed nodes call them on the config node.
 *
 * Unlike Node-RED, a publish while the client is reconnecting is queued by MQTT.js and sent once
 * the broker is back, instead of being dropped.
 */
import type * as Mqtt from 'mqtt';
import type { IClientSubscribeOptions, MqttClient } from 'mqtt';
import { lazy } from '../../../base/lazy.js';

/** MQTT.js is ~17 MiB resident: loaded when a broker node first connects. */
const mqtt = lazy<typeof Mqtt>('mqtt');
import type { TlsConfigNode } from '../tls/tls.js';
import type { NodeConfig, NodeInstance, NodeStatus, RedApi } from '../../../runtime/red-api/red-api-types.js';
import { brokerUrl, clientOptions, isV5, mergeSettings, settingsFromConfig, type BrokerSettings } from './options.js';
import { setBoolProp, setBufferProp, setIntProp, setStrProp, setUserProperties } from './properties.js';
import { isValidPublishTopic, matchTopic } from './topic.js';
import { getProxyForUrl, type ProxyOptions } from '../proxy/lookup.js';
import { parseProxy } from '../proxy/select.js';
import { tunnelAgent } from '../proxy/tunnel.js';

type Bag = Record<string, any>;
export type MessageCallback = (topic: string, payload: Buffer, packet: Bag) => void;

interface Subscription {
  topic: string;
  options: Bag;
  /** null while the node that made it restarts and the client subscription is kept for it. */
  callback: MessageCallback | null;
  ref: string;
}

export const STATUS = {
  connected: { fill: 'green', shape: 'dot', text: 'node-red:common.status.connected' },
  connecting: { fill: 'yellow', shape: 'ring', text: 'node-red:common.status.connecting' },
  disconnected: { fill: 'red', shape: 'ring', text: 'node-red:common.status.disconnected' },
} satisfies Record<string, NodeStatus>;

export interface MqttBrokerNode extends NodeInstance {
  broker?: string;
  brokerurl: string;
  options: Bag;
  client?: MqttClient;
  connected: boolean;
  connecting: boolean;
  closing: boolean;
  serverProperties: Bag;
  users: Record<string, NodeInstance>;
  v5(): boolean;
  register(user: NodeInstance): void;
  deregister(user: NodeInstance, done: () => void, autoDisconnect?: boolean): void;
  canConnect(): boolean;
  setOptions(change: Bag): void;
  connect(callback?: () => void): void;
  disconnect(callback?: () => void): void;
  subscribe(topic: string, options: Bag | number, callback: MessageCallback, ref: string): void;
  unsubscribe(topic: string, ref: string, removeClientSubscription?: boolean): void;
  publish(msg: Bag, done?: (err?: unknown) => void): void;
}

/** How long a closing client may take to flush before it is ended by force. */
const END_WAIT_MS = 2000;

/**
 * Client subscriptions kept for a restarting node (autoUnsubscribe off), by node id across all
 * brokers: when the node comes back with another topic or broker, the old ones are dropped.
 */
const kept = new Map<string, { topic: string; broker: string }[]>();

export default function (RED: RedApi) {
  function MqttBroker(this: MqttBrokerNode, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    let settings: BrokerSettings;
    const subscriptions = new Map<string, Map<string, Subscription>>();
    const subscriptionIds = new Map<string, number>();
    let nextSubscriptionId = 1;
    let topicAliases: Record<number, string> = {};
    node.users = {};
    node.connected = false;
    node.connecting = false;
    node.closing = false;
    node.serverProperties = {};

    const statusAll = (s: NodeStatus) => {
      for (const user of Object.values(node.users)) user.status(s);
    };
    const label = () => `${settings.clientid ? `${settings.clientid}@` : ''}${node.brokerurl}`;

    node.setOptions = (change: Bag) => {
      if (!change || typeof change !== 'object') return;
      apply(mergeSettings(settings, change));
    };
    function apply(next: BrokerSettings) {
      settings = next;
      node.broker = settings.broker;
      node.brokerurl = brokerUrl(settings);
      if (!settings.cleansession && !settings.clientid) {
        settings.cleansession = true;
        node.warn('No client ID set, using clean session');
      }
      const tlsNode = config.tls ? (RED.nodes.getNode(String(config.tls)) as TlsConfigNode | null) : null;
      const clientId = settings.clientid || `nodered${RED.util.generateId()}`;
      const reconnect = Number(RED.settings.mqttReconnectTime) || 5000;
      node.options = clientOptions(settings, clientId, reconnect, tlsNode ? (o) => tlsNode.addTLSOptions(o) : undefined);
      // As in Node-RED, a ws:// or wss:// broker (not a `url`) goes through the proxy the environment
      // names for that scheme (ws_proxy, wss_proxy, all_proxy; no_proxy), as a CONNECT tunnel.
      const wsBroker = !settings.url && typeof settings.broker === 'string' && /^wss?:\/\//i.test(settings.broker);
      const proxy = wsBroker ? parseProxy(getProxyForUrl(node.brokerurl, RED.settings.proxyOptions as ProxyOptions | undefined)) : undefined;
      if (proxy) node.options.wsOptions = { agent: tunnelAgent(proxy, new URL(node.brokerurl), node.options) };
    }
    apply(settingsFromConfig(config, node.credentials));
    node.v5 = () => isV5(settings);
    const subscriptionIdsAvailable = () => node.v5() && node.serverProperties.subscriptionIdentifiersAvailable === true;

    node.register = (user: NodeInstance) => {
      node.users[user.id] = user;
      if (Object.keys(node.users).length === 1 && settings.autoConnect) node.connect();
      user.status(node.connected ? STATUS.connected : node.connecting ? STATUS.connecting : STATUS.disconnected);
    };
    node.deregister = (user: NodeInstance, done: () => void, autoDisconnect?: boolean) => {
      user.status(STATUS.disconnected);
      delete node.users[user.id];
      if (autoDisconnect && !node.closing && node.connected && Object.keys(node.users).length === 0) node.disconnect(done);
      else done();
    };
    node.canConnect = () => !node.connected && !node.connecting;

    function onConnect(connack: Bag) {
      node.closing = false;
      node.connecting = false;
      node.connected = true;
      topicAliases = {};
      node.log(`Connected to broker: ${label()}`);
      node.serverProperties = {};
      const props = connack?.properties;
      if (node.v5() && props && typeof props === 'object') {
        const sp = node.serverProperties;
        setIntProp(props, sp, 'topicAliasMaximum', 0);
        setIntProp(props, sp, 'receiveMaximum', 0);
        setIntProp(props, sp, 'sessionExpiryInterval', 0, 0xffffffff);
        setIntProp(props, sp, 'maximumQoS', 0, 2);
        setBoolProp(props, sp, 'retainAvailable', true);
        setBoolProp(props, sp, 'wildcardSubscriptionAvailable', true);
        setBoolProp(props, sp, 'subscriptionIdentifiersAvailable', true);
        setBoolProp(props, sp, 'sharedSubscriptionAvailable');
        setIntProp(props, sp, 'maximumPacketSize', 0);
        setIntProp(props, sp, 'serverKeepAlive');
        setStrProp(props, sp, 'responseInformation');
        setStrProp(props, sp, 'serverReference');
        setStrProp(props, sp, 'assignedClientIdentifier');
        setStrProp(props, sp, 'reasonString');
        setUserProperties(props, sp);
      }
      statusAll(STATUS.connected);
      for (const topic of subscriptions.keys()) clientSubscribe(topic);
      const birth = settings.birth;
      if (birth) setImmediate(() => node.publish({ ...birth }));
    }

    /** Delivers one received message to every subscription whose filter (and v5 identifier) matches. */
    function onMessage(topic: string, payload: Buffer, packet: Bag) {
      const ids = subscriptionIdsAvailable() ? packet.properties?.subscriptionIdentifier : undefined;
      for (const [filter, refs] of subscriptions) {
        if (ids !== undefined) {
          const id = subscriptionIds.get(filter);
          if (Array.isArray(ids) ? !ids.includes(id) : ids !== id) continue;
        }
        if (!matchTopic(filter, topic)) continue;
        for (const sub of refs.values()) {
          try {
            sub.callback?.(topic, payload, packet);
          } catch (err) {
            node.error(`MQTT subscription handler error: ${String(err)}`);
          }
        }
      }
    }

    node.connect = (callback?: () => void) => {
      if (!node.canConnect()) return;
      node.closing = false;
      node.connecting = true;
      statusAll(STATUS.connecting);
      node.client?.end(true);
      const client = mqtt().connect(node.brokerurl, node.options);
      node.client = client;
      client.setMaxListeners(0);
      let called = false;
      client.on('connect', (connack) => {
        if (client !== node.client) return;
        onConnect(connack as Bag);
        if (!called) {
          called = true;
          callback?.();
        }
      });
      client.on('message', (topic, payload, packet) => {
        if (client === node.client) onMessage(topic, payload, packet as Bag);
      });
      client.on('reconnect', () => {
        if (client === node.client) statusAll(STATUS.connecting);
      });
      client.on('disconnect', (packet: Bag) => {
        if (client !== node.client) return;
        node.connected = false;
        node.log(`Disconnected from broker: ${label()} (reason code ${packet?.reasonCode}${packet?.properties?.reasonString ? `: ${packet.properties.reasonString}` : ''})`);
        statusAll(STATUS.disconnected);
      });
      client.on('close', () => {
        // A stream that closed will not drain: what waited on it was written as far as it goes.
        releaseDrained();
        if (client !== node.client) return;
        if (node.connected) {
          node.connected = false;
          node.log(`Disconnected from broker: ${label()}`);
          statusAll(STATUS.disconnected);
        } else if (node.connecting) node.log(`Connection failed to broker: ${label()}`);
      });
      // MQTT.js reconnects by itself; an error event without a listener would crash the process.
      client.on('error', () => {});
    };

    node.disconnect = (callback?: () => void) => {
      const finish = () => {
        releaseDrained();
        if (node.connected || node.connecting) statusAll(STATUS.disconnected);
        node.connected = false;
        node.connecting = false;
        callback?.();
      };
      const client = node.client;
      if (!client || node.closing) return finish();
      const end = () => {
        node.closing = true;
        const timer = setTimeout(() => {
          client.end(true);
          finish();
        }, END_WAIT_MS);
        client.end(() => {
          clearTimeout(timer);
          finish();
        });
      };
      const close = settings.close;
      if (node.connected && close) node.publish({ ...close }, end);
      else end();
    };

    function clientSubscribe(topic: string) {
      const refs = subscriptions.get(topic);
      const first = refs?.values().next().value;
      if (!node.connected || !node.client || !first) return;
      const options: Bag = { ...first.options, properties: { ...(first.options.properties ?? {}) } };
      if (subscriptionIdsAvailable()) options.properties.subscriptionIdentifier = subscriptionIds.get(topic);
      if (Object.keys(options.properties).length === 0) delete options.properties;
      node.client.subscribe(topic, options as IClientSubscribeOptions);
    }

    node.subscribe = (topic: string, options: Bag | number, callback: MessageCallback, ref: string) => {
      ref = ref || '0';
      const old = kept.get(ref);
      if (old) {
        kept.delete(ref);
        for (const k of old) {
          if (k.broker === node.id && k.topic === topic) continue;
          const owner = RED.nodes.getNode(k.broker) as MqttBrokerNode | null;
          owner?.unsubscribe?.(k.topic, ref, true);
        }
      }
      const opts: Bag = typeof options === 'object' && options !== null ? structuredClone(options) : {};
      const qos = typeof options === 'number' ? options : typeof options === 'object' && options !== null ? options.qos : 1;
      if (typeof qos === 'number' && qos >= 0 && qos <= 2) opts.qos = qos;
      else opts.qos ??= 1;
      let refs = subscriptions.get(topic);
      if (!refs) subscriptions.set(topic, (refs = new Map()));
      const existing = refs.get(ref);
      const same = existing !== undefined && RED.util.compareObjects(existing.options, opts);
      refs.set(ref, { topic, options: opts, callback, ref });
      if (!subscriptionIds.has(topic)) subscriptionIds.set(topic, nextSubscriptionId++);
      if (!same) clientSubscribe(topic);
    };

    node.unsubscribe = (topic: string, ref: string, removeClientSubscription?: boolean) => {
      ref = ref || '0';
      const refs = subscriptions.get(topic);
      const sub = refs?.get(ref);
      if (!refs || !sub) return;
      if (!removeClientSubscription && !settings.autoUnsubscribe) {
        sub.callback = null;
        const list = kept.get(ref) ?? [];
        list.push({ topic, broker: node.id });
        kept.set(ref, list);
        return;
      }
      refs.delete(ref);
      if (refs.size > 0) return;
      subscriptions.delete(topic);
      subscriptionIds.delete(topic);
      if (node.connected) node.client?.unsubscribe(topic);
    };

    /** Completions of QoS 0 publishes written while the socket was backed up. */
    let awaitingDrain: ((err?: unknown) => void)[] = [];
    const releaseDrained = () => {
      const waiting = awaitingDrain;
      awaitingDrain = [];
      for (const done of waiting) done();
    };

    node.publish = (msg: Bag, done?: (err?: unknown) => void) => {
      const client = node.client;
      if (!client || node.closing) {
        done?.();
        return;
      }
      const p = msg.payload;
      msg.payload = p === null || p === undefined ? '' : Buffer.isBuffer(p) ? p : typeof p === 'object' ? JSON.stringify(p) : String(p);
      const options: Bag = { qos: msg.qos || 0, retain: msg.retain || false };
      let topicOk = isValidPublishTopic(msg.topic);
      if (node.v5()) {
        const sp = node.serverProperties;
        if (msg.userProperties && typeof msg.userProperties !== 'object') delete msg.userProperties;
        if (Object.prototype.hasOwnProperty.call(msg, 'topicAlias') && !isNaN(Number(msg.topicAlias))) msg.topicAlias = parseInt(msg.topicAlias);
        else delete msg.topicAlias;
        const props: Bag = (options.properties = {});
        setStrProp(msg, props, 'responseTopic');
        setBufferProp(msg, props, 'correlationData');
        setStrProp(msg, props, 'contentType');
        setIntProp(msg, props, 'messageExpiryInterval', 0);
        setUserProperties(msg.userProperties, props);
        setIntProp(msg, props, 'topicAlias', 1, sp.topicAliasMaximum || 0);
        setBoolProp(msg, props, 'payloadFormatIndicator');
        if (topicOk && props.topicAlias) {
          if (!(sp.topicAliasMaximum >= props.topicAlias)) {
            done?.('Invalid topicAlias');
            return;
          }
          if (topicAliases[props.topicAlias] === msg.topic) msg.topic = '';
          else topicAliases[props.topicAlias] = msg.topic;
        } else if (!msg.topic && props.responseTopic) {
          msg.topic = msg.responseTopic;
          topicOk = isValidPublishTopic(msg.topic);
          delete msg.responseTopic;
        }
      }
      if (!topicOk) {
        const error = Object.assign(new Error('Invalid topic specified'), { warn: true });
        if (done) done(error);
        else node.warn(error.message);
        return;
      }
      if (options.qos === 0 && done) {
        // MQTT.js would add a 'drain' listener per QoS 0 publish while the socket is backed up,
        // and removing thousands of them costs more than the publishing: one listener completes all.
        client.publish(msg.topic, msg.payload, options);
        const stream = client.stream as NodeJS.WritableStream & { writableNeedDrain?: boolean };
        if (!stream?.writableNeedDrain) return done();
        if (awaitingDrain.push(done) === 1) stream.once('drain', releaseDrained);
        return;
      }
      client.publish(msg.topic, msg.payload, options, (err) => {
        if (done) done(err);
        else if (err) node.error(err, msg);
      });
    };

    node.on('close', (done: () => void) => node.disconnect(done));
  }

  RED.nodes.registerType('mqtt-broker', MqttBroker as never, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
}

