import { isUtf8 } from 'node:buffer';
import { parse as parseQueryString } from 'node:querystring';
import { RunnelError } from '../../base/errors.js';
import { invalidJson } from '../json-error.js';
import { mediaType, toPlainObject } from './request.js';

/**
 * Turns a raw request body into `req.body` the way Node-RED's http-in node does (body-parser's
 * json and urlencoded, then its own raw-body rules): JSON and forms become objects, text becomes
 * a string, binary stays a Buffer, and no body at all is `{}`.
 */
export function parseBody(contentType: string | undefined, raw: Buffer | undefined): unknown {
  if (raw === undefined || raw.length === 0) return {};
  const type = mediaType(contentType);
  if (type === 'application/json' || type.endsWith('+json')) return parseJson(raw, contentType as string);
  if (type === 'application/x-www-form-urlencoded') {
    return toPlainObject(parseQueryString(raw.toString('utf8'), '&', '=', { maxKeys: 1000 }));
  }
  const text = textEncoding(type, raw);
  return text === undefined ? raw : raw.toString(charset(contentType) ?? text);
}

/**
 * How an http-in route reads its body besides the usual parsing: `raw` (skipBodyParsing) hands
 * the flow the bytes as a Buffer; `upload` parses multipart/form-data into fields and files.
 */
export type BodyMode = 'raw' | 'upload';

/** multer's test (type-is 'multipart'): any multipart type; busboy then refuses all but form-data. */
export function isMultipart(contentType: string | undefined): boolean {
  return mediaType(contentType).startsWith('multipart/');
}

/**
 * A body that is not multipart, on an upload route. multer marks the body read even when it
 * skipped it, so Node-RED's raw-body step never runs: JSON and forms are parsed, anything else
 * leaves body-parser's empty object.
 */
export function uploadRouteBody(contentType: string | undefined, raw: Buffer | undefined): unknown {
  const body = parseBody(contentType, raw);
  return typeof body === 'string' || Buffer.isBuffer(body) ? {} : body;
}

function parseJson(raw: Buffer, contentType: string): unknown {
  const text = raw.toString(charset(contentType) ?? 'utf8');
  // body-parser's strict mode, which Node-RED uses: only an object or an array is a JSON body.
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') {
    throw new RunnelError('invalid_json', 'Request body is not valid JSON: expected an object or an array');
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalidJson(text, e);
  }
}

/** Node-RED's rule: text and XML are strings, known binary types are Buffers, other application/* are strings when valid UTF-8. */
function textEncoding(type: string, raw: Buffer): BufferEncoding | undefined {
  if (type === '') return 'utf8';
  const [major, minor = ''] = type.split('/');
  if (major === 'text' || minor === 'xml' || minor.endsWith('+xml')) return 'utf8';
  if (major !== 'application') return undefined;
  if (minor === 'octet-stream' || minor === 'cbor' || minor === 'x-protobuf') return undefined;
  return isUtf8(raw) ? 'utf8' : undefined;
}

const ENCODINGS: Record<string, BufferEncoding> = {
  'utf-8': 'utf8', utf8: 'utf8', 'iso-8859-1': 'latin1', latin1: 'latin1', 'us-ascii': 'ascii', ascii: 'ascii',
  'utf-16le': 'utf16le', utf16le: 'utf16le',
};

function charset(contentType: string | undefined): BufferEncoding | undefined {
  const m = contentType ? /;\s*charset\s*=\s*"?([\w-]+)"?/i.exec(contentType) : null;
  return m ? ENCODINGS[m[1].toLowerCase()] : undefined;
}
