import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * GET /flows as an HTTP representation: the rev is the content hash, so it is a strong validator
 * (`If-None-Match` → 304 without touching the body), and a compressed body is made once per
 * deployed configuration and shared by every later request instead of compressed per request.
 */

type Coding = 'br' | 'gzip';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);
/** Below this a compressed body saves less than the work and the header it costs. */
const MIN_COMPRESS_BYTES = 1024;
/** Brotli's default quality (11) takes seconds on a 10,000-node document; 5 is within a few % of its size. */
const BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } };

/** Compressed copies, keyed by the runtime's own body buffer: a new deploy makes a new buffer, and the old entries go with it. */
const encoded = new WeakMap<Buffer, Partial<Record<Coding, Promise<Buffer>>>>();

function compressed(body: Buffer, coding: Coding): Promise<Buffer> {
  let entry = encoded.get(body);
  if (!entry) encoded.set(body, (entry = {}));
  return (entry[coding] ??= coding === 'br' ? brotli(body, BROTLI_OPTIONS) : gzip(body));
}

/** The coding to answer with: the client's preference by q-value, brotli first among equals (RFC 9110 §12.5.3). */
export function chooseCoding(acceptEncoding: string | undefined): Coding | undefined {
  if (!acceptEncoding) return undefined;
  const q: Record<string, number> = {};
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q[name] = Number.isFinite(value) ? value : 0;
  }
  const of = (c: string) => q[c] ?? (q['*'] ?? 0);
  const br = of('br');
  const gz = of('gzip');
  if (br <= 0 && gz <= 0) return undefined;
  return br >= gz ? 'br' : 'gzip';
}

/** Whether an If-None-Match list names this entity: weak comparison, any content-coding suffix ignored. */
export function matchesEtag(ifNoneMatch: string | undefined, tag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const bare = (t: string) => t.trim().replace(/^W\//, '').replace(/-(br|gzip)"$/, '"');
  return ifNoneMatch.split(',').some((t) => bare(t) === tag);
}

/** Sends `body` (the flows document of `rev`) with validators, a 304 when the client has it, compressed when it asks. */
export async function sendFlowsBody(request: FastifyRequest, reply: FastifyReply, body: Buffer, rev: string, version: 'v1' | 'v2'): Promise<FastifyReply> {
  const tag = `"${rev}${version === 'v1' ? '-v1' : ''}"`;
  // Cache-Control stays the admin API's no-store (no browser keeps the flows on disk); clients
  // that keep their own copy revalidate it with the tag.
  const vary = reply.getHeader('vary');
  reply.header('Vary', `${vary ? `${String(vary)}, ` : ''}Accept-Encoding, Node-RED-API-Version, Runtime-API-Version`);
  if (matchesEtag(request.headers['if-none-match'], tag)) return reply.header('ETag', tag).code(304).send();
  reply.type('application/json');
  const coding = body.length >= MIN_COMPRESS_BYTES ? chooseCoding(request.headers['accept-encoding']) : undefined;
  if (!coding) return reply.header('ETag', tag).send(body);
  const bytes = await compressed(body, coding);
  return reply.header('ETag', `${tag.slice(0, -1)}-${coding}"`).header('Content-Encoding', coding).send(bytes);
}
