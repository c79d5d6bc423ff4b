/**
 * The `mqtt-broker` node's settings and how they become MQTT.js client options: the URL built from
 * broker/port/TLS, protocol 3.1 / 3.1.1 / 5, will, birth and close messages. Settings come from the
 * node's configuration at start (`init`) and from `msg.broker` of a `connect` action later, with
 * Node-RED's property names for both.
 */
import type { IClientOptions } from 'mqtt';
import { parseUserProperties, setBufferProp, setIntProp, setStrProp, setUserProperties } from './properties.js';

type Bag = Record<string, any>;
const has = (o: Bag, k: string) => Object.prototype.hasOwnProperty.call(o, k);

export interface MqttMessage {
  topic: string;
  payload: string | Buffer;
  qos: 0 | 1 | 2;
  retain: boolean;
  properties?: Bag;
  [v5prop: string]: unknown;
}

/** Every setting a broker connection is made from. */
export interface BrokerSettings {
  url?: string;
  broker?: string;
  port?: string | number;
  clientid?: string;
  autoConnect: boolean;
  usetls: boolean;
  verifyservercert: boolean | string;
  compatmode?: boolean | string;
  protocolVersion?: string | number;
  keepalive: number;
  cleansession: boolean;
  autoUnsubscribe: boolean;
  userProperties?: unknown;
  sessionExpiryInterval?: string | number;
  username?: string;
  password?: string;
  birth?: MqttMessage;
  close?: MqttMessage;
  will?: MqttMessage;
}

const SIMPLE = [
  'url', 'broker', 'port', 'clientid', 'autoConnect', 'usetls', 'verifyservercert', 'compatmode',
  'protocolVersion', 'keepalive', 'cleansession', 'autoUnsubscribe',
] as const;

/**
 * A birth, close or will message. v5 settings use the editor's short names (`respTopic`, `correl`,
 * `expiry`, `delay`, `userProps`); a will's v5 properties go into `properties`, as MQTT.js wants.
 */
function lastWord(topic: unknown, payload: unknown, qos: unknown, retain: unknown, v5: Bag | undefined, nested: boolean): MqttMessage | undefined {
  if (!topic) return undefined;
  const message: MqttMessage = { topic: String(topic), payload: (payload as string) || '', qos: Number(qos || 0) as 0 | 1 | 2, retain: retain === 'true' || retain === true };
  if (v5 && typeof v5 === 'object') {
    const props: Bag = nested ? (message.properties = {}) : message;
    const src: Bag = { ...v5 };
    if (has(src, 'respTopic')) src.responseTopic = src.respTopic;
    if (has(src, 'correl')) src.correlationData = src.correl;
    if (has(src, 'expiry')) src.messageExpiryInterval = src.expiry;
    if (has(src, 'delay')) src.willDelayInterval = src.delay;
    if (has(src, 'userProps')) src.userProperties = src.userProps;
    if (typeof src.userProperties === 'string') {
      const parsed = parseUserProperties(src.userProperties);
      if (parsed) props.userProperties = parsed;
    } else setUserProperties(src.userProperties, props);
    setStrProp(src, props, 'contentType');
    setStrProp(src, props, 'responseTopic');
    setBufferProp(src, props, 'correlationData');
    setIntProp(src, props, 'messageExpiryInterval');
    setIntProp(src, props, 'willDelayInterval');
  }
  return message;
}

/** The settings in a node's configuration (credentials hold user and password). */
export function settingsFromConfig(config: Bag, credentials: Bag | undefined): BrokerSettings {
  const s: Bag = {};
  for (const k of SIMPLE) if (has(config, k)) s[k] = config[k];
  s.autoConnect = !(config.autoConnect === 'false' || config.autoConnect === false);
  s.userProperties = has(config, 'userProps') ? config.userProps : config.userProperties;
  s.sessionExpiryInterval = has(config, 'sessionExpiry') ? config.sessionExpiry : config.sessionExpiryInterval;
  if (has(config, 'birthTopic')) s.birth = lastWord(config.birthTopic, config.birthPayload, config.birthQos, config.birthRetain, config.birthMsg, false);
  if (has(config, 'closeTopic')) s.close = lastWord(config.closeTopic, config.closePayload, config.closeQos, config.closeRetain, config.closeMsg, false);
  if (has(config, 'willTopic')) s.will = lastWord(config.willTopic, config.willPayload, config.willQos, config.willRetain, config.willMsg, true);
  s.username = credentials?.user;
  s.password = credentials?.password;
  return normalise(s as BrokerSettings);
}

/** `msg.broker` of a `connect` action: only the properties it has change. */
export function mergeSettings(current: BrokerSettings, change: Bag): BrokerSettings {
  const s: Bag = { ...current };
  for (const k of SIMPLE) if (has(change, k)) s[k] = change[k];
  if (has(change, 'userProperties')) s.userProperties = change.userProperties;
  else if (has(change, 'userProps')) s.userProperties = change.userProps;
  if (has(change, 'sessionExpiry')) s.sessionExpiryInterval = change.sessionExpiry;
  else if (has(change, 'sessionExpiryInterval')) s.sessionExpiryInterval = change.sessionExpiryInterval;
  for (const which of ['birth', 'close', 'will'] as const) {
    if (!has(change, which)) continue;
    const m: Bag = change[which] && typeof change[which] === 'object' ? change[which] : {};
    s[which] = lastWord(m.topic, m.payload, m.qos, m.retain, m.properties, which === 'will');
  }
  if (has(change, 'username')) s.username = change.username;
  if (has(change, 'password')) s.password = change.password;
  return normalise(s as BrokerSettings);
}

function normalise(s: BrokerSettings): BrokerSettings {
  s.usetls ??= false;
  s.verifyservercert ??= false;
  s.keepalive = s.keepalive === undefined ? 60 : Number(s.keepalive);
  s.cleansession ??= true;
  if (typeof s.autoUnsubscribe !== 'boolean') s.autoUnsubscribe = true;
  return s;
}

const IPV6 = /^[0-9a-fA-F:]*:[0-9a-fA-F:.%a-zA-Z]*$/;

/** `url` wins; a broker with a scheme is a URL; otherwise mqtt(s)://broker:port (IPv6 bracketed). */
export function brokerUrl(s: BrokerSettings): string {
  if (s.url) return s.url;
  if (typeof s.broker === 'string' && s.broker.includes('://')) return s.broker;
  const scheme = s.usetls ? 'mqtts://' : 'mqtt://';
  if (!s.broker) return `${scheme}localhost:1883`;
  const host = IPV6.test(s.broker) ? `[${s.broker}]` : s.broker;
  return `${scheme}${host}:${s.port || 1883}`;
}

export const isV5 = (s: BrokerSettings) => !(s.compatmode === true || s.compatmode === 'true') && Number(s.protocolVersion) === 5;

/** MQTT.js options for these settings; `tls` adds the tls-config node's key material. */
export function clientOptions(s: BrokerSettings, clientId: string, reconnectPeriod: number, tls?: (opts: Bag) => void): IClientOptions {
  const o: Bag = {
    username: s.username,
    password: s.password,
    keepalive: s.keepalive,
    clean: s.cleansession,
    clientId,
    reconnectPeriod,
    // Subscriptions are restored by the broker node itself after every connect, once per topic.
    resubscribe: false,
  };
  if (s.compatmode === true || s.compatmode === 'true' || Number(s.protocolVersion) === 3) {
    o.protocolId = 'MQIsdp';
    o.protocolVersion = 3;
  } else if (isV5(s)) {
    o.protocolVersion = 5;
    o.properties = { requestResponseInformation: true, requestProblemInformation: true };
    const user = typeof s.userProperties === 'string' ? parseUserProperties(s.userProperties) : undefined;
    if (user) o.properties.userProperties = user;
    if (s.sessionExpiryInterval && s.sessionExpiryInterval !== '0') setIntProp(s, o.properties, 'sessionExpiryInterval');
  }
  if (s.will) {
    const will = { ...s.will } as Bag;
    const p = will.payload;
    will.payload = p === null || p === undefined ? '' : Buffer.isBuffer(p) ? p : typeof p === 'object' ? JSON.stringify(p) : String(p);
    o.will = will;
  }
  if (s.usetls && tls) tls(o);
  if (o.rejectUnauthorized === undefined) o.rejectUnauthorized = s.verifyservercert === true || s.verifyservercert === 'true';
  return o as IClientOptions;
}
