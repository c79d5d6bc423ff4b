import type { ServerResponse } from 'node:http';
import type Mime from 'mime';
import { lazy } from '../../base/lazy.js';

const mime = lazy<typeof Mime>('mime');

/**
 * The short type names `res.type('json')` and `req.is('html')` accept. Express looks them up in
 * the full mime database; these are the ones handlers use in practice.
 */
const TYPES: Record<string, string> = {
  html: 'text/html',
  htm: 'text/html',
  text: 'text/plain',
  txt: 'text/plain',
  css: 'text/css',
  csv: 'text/csv',
  md: 'text/markdown',
  xml: 'application/xml',
  json: 'application/json',
  js: 'application/javascript',
  mjs: 'application/javascript',
  bin: 'application/octet-stream',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  wasm: 'application/wasm',
  form: 'application/x-www-form-urlencoded',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  webp: 'image/webp',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  woff: 'font/woff',
  woff2: 'font/woff2',
};

export function mimeFor(name: string): string | undefined {
  const key = name.toLowerCase();
  return TYPES[key.startsWith('.') ? key.slice(1) : key];
}

/** Express adds `charset=utf-8` to these when a handler sets the Content-Type without one. */
export function defaultCharset(type: string): boolean {
  return type.startsWith('text/') || type.startsWith('application/json') || type.startsWith('application/javascript');
}

/**
 * The Content-Type Express 4 sends a file with (send 0.19 on mime 1.x): `.js` is
 * `application/javascript; charset=UTF-8` where the newer table says `text/javascript`. Set on
 * send's `headers` event, before send picks its own; a type already set stays.
 */
export function setFileType(res: ServerResponse, file: string): void {
  if (res.getHeader('Content-Type')) return;
  const type = mime().lookup(file);
  const charset = mime().charsets.lookup(type);
  res.setHeader('Content-Type', charset ? `${type}; charset=${charset}` : type);
}
