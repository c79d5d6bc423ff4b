import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);
/** Below this, compression costs more than it saves. */
export const MIN_COMPRESS = 1024;
/** Distinct answers kept compressed (node HTML per language and module set, catalogs). */
const MAX_CACHED = 32;

const cache = new Map<string, Promise<Buffer>>();

/** The encoding to answer with, or undefined: brotli when accepted, else gzip. */
export function pickEncoding(request: FastifyRequest, length: number): 'br' | 'gzip' | undefined {
  if (length < MIN_COMPRESS) return undefined;
  const accept = String(request.headers['accept-encoding'] ?? '');
  if (/\bbr\b/.test(accept)) return 'br';
  if (/\bgzip\b/.test(accept)) return 'gzip';
  return undefined;
}

/**
 * Fast levels: a request waits for this (generated answers, theme files, editor files the build
 * did not precompress), and the higher levels cost four times the CPU for 5-10% fewer bytes.
 */
export function compress(body: Buffer, encoding: 'br' | 'gzip'): Promise<Buffer> {
  return encoding === 'br' ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }) : gzip(body, { level: 4 });
}

/**
 * Sends a large generated answer (the editor's node HTML, message catalogs) compressed as the
 * client accepts. The same text is compressed once: answers are keyed by their hash, and the
 * editor asks for the same few over and over.
 */
export async function sendCompressed(request: FastifyRequest, reply: FastifyReply, text: string, type: string): Promise<FastifyReply> {
  reply.type(type).header('Vary', 'Accept-Encoding');
  const body = Buffer.from(text);
  const encoding = pickEncoding(request, body.length);
  if (!encoding) return reply.send(body);
  const key = `${encoding}:${createHash('sha1').update(body).digest('base64url')}`;
  let pending = cache.get(key);
  if (!pending) {
    pending = compress(body, encoding);
    cache.set(key, pending);
    if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
  }
  return reply.header('Content-Encoding', encoding).send(await pending);
}
