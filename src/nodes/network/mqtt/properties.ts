/**
 * MQTT 5 properties between messages and packets, with Node-RED's coercions: integers within
 * bounds, strings, booleans (`"true"` too), buffers, and user properties as string pairs (other
 * values JSON-encoded).
 */
import { isUtf8 } from 'node:buffer';

type Bag = Record<string, any>;
const has = (o: Bag, k: string) => Object.prototype.hasOwnProperty.call(o, k);

export function setIntProp(src: Bag, dst: Bag, name: string, min?: number, max?: number, def?: number): void {
  if (has(src, name)) {
    const v = parseInt(src[name]);
    if (isNaN(v) || (min != null && v < min) || (max != null && v > max)) return;
    dst[name] = v;
  } else if (def !== undefined) dst[name] = def;
}

export function setStrProp(src: Bag, dst: Bag, name: string, def?: string): void {
  if (src[name] && typeof src[name] === 'string') dst[name] = src[name];
  else if (def !== undefined) dst[name] = def;
}

export function setBoolProp(src: Bag, dst: Bag, name: string, def?: boolean): void {
  if (src[name] != null) {
    if (src[name] === true || src[name] === 'true') dst[name] = true;
    else if (src[name] === false || src[name] === 'false') dst[name] = false;
  } else if (def !== undefined) dst[name] = def;
}

export function setBufferProp(src: Bag | undefined, dst: Bag, name: string): void {
  const value = src?.[name];
  if (value) dst[name] = Buffer.from(value);
}

/** Copies string pairs into `dst.userProperties`; sets nothing when no usable pair is left. */
export function setUserProperties(src: unknown, dst: Bag): void {
  if (!src || typeof src !== 'object') return;
  const out: Record<string, string> = {};
  let count = 0;
  for (const [key, value] of Object.entries(src)) {
    if (typeof value === 'string') out[key] = value;
    else if (value === undefined || value === null) continue;
    else {
      try {
        out[key] = JSON.stringify(value);
      } catch {
        continue;
      }
    }
    count++;
  }
  if (count) dst.userProperties = out;
}

/** User properties given as JSON text in a node's configuration (`{"a":"b"}`); undefined otherwise. */
export function parseUserProperties(text: unknown): Record<string, string> | undefined {
  if (typeof text !== 'string' || !/^ *{/.test(text)) return undefined;
  try {
    const holder: Bag = {};
    setUserProperties(JSON.parse(text), holder);
    return holder.userProperties;
  } catch {
    return undefined;
  }
}

const MEDIA_TYPES: Record<string, 'string' | 'json' | 'buffer'> = {
  'text/css': 'string', 'text/html': 'string', 'text/plain': 'string', 'application/json': 'json',
  'application/octet-stream': 'buffer', 'application/pdf': 'buffer', 'application/x-gtar': 'buffer',
  'application/x-gzip': 'buffer', 'application/x-tar': 'buffer', 'application/xml': 'string',
  'application/zip': 'buffer', 'audio/aac': 'buffer', 'audio/ac3': 'buffer', 'audio/basic': 'buffer',
  'audio/mp4': 'buffer', 'audio/ogg': 'buffer', 'image/bmp': 'buffer', 'image/gif': 'buffer',
  'image/jpeg': 'buffer', 'image/tiff': 'buffer', 'image/png': 'buffer',
};

export class PayloadError extends Error {}

function textOrJson(text: string, parse: boolean): unknown {
  if (!parse) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The payload an `mqtt in` node sends for `datatype` (`auto-detect`, `auto`, `buffer`, `utf8`,
 * `json`, `base64`). A v5 content type or payload format indicator decides before guessing.
 * Throws PayloadError with Node-RED's message when JSON was required and is not there.
 */
export function decodePayload(datatype: string, payload: Buffer, v5: boolean, msg: Bag): unknown {
  switch (datatype) {
    case 'buffer':
      return payload;
    case 'base64':
      return payload.toString('base64');
    case 'utf8':
      return payload.toString('utf8');
    case 'json':
      if (!(v5 && msg.payloadFormatIndicator === true) && !isUtf8(payload)) throw new PayloadError('Invalid JSON string');
      try {
        return JSON.parse(payload.toString());
      } catch {
        throw new PayloadError('Failed to parse JSON string');
      }
  }
  const detect = datatype === 'auto-detect';
  const declaredUtf8 = v5 && msg.payloadFormatIndicator === true;
  if (v5 && (declaredUtf8 || msg.contentType)) {
    const kind = MEDIA_TYPES[String(msg.contentType).toLowerCase()];
    if (kind === 'string') return payload.toString();
    if (kind === 'buffer') return payload;
    if (kind === 'json') {
      const text = payload.toString();
      try {
        const parsed = JSON.parse(text);
        return detect ? parsed : text;
      } catch {
        throw new PayloadError('Failed to parse JSON string');
      }
    }
    return declaredUtf8 || isUtf8(payload) ? textOrJson(payload.toString(), detect) : payload;
  }
  return isUtf8(payload) ? textOrJson(payload.toString(), detect) : payload;
}
