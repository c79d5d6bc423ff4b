import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { compress, pickEncoding } from './compress.js';
import { contentTypeOf, isCompressibleType } from './file-types.js';
import { contentHash, readPrecompressed, type Encoding } from './precompressed.js';

interface Entry {
  body: Buffer;
  sha1: string;
  etag: string;
  type: string;
  mtime: Date;
  gzip?: Promise<Buffer>;
  br?: Promise<Buffer>;
}

/** A file being read or read; `bytes` counts against the budget once it is in. */
interface Slot {
  entry: Promise<Entry | null>;
  bytes: number;
}

export interface ServeOptions {
  /** The URL carried the package's cache buster: the answer may be kept for a year. */
  immutable?: boolean;
}

/** Bytes of files kept read (their compressed copies come on top): editor-client's public/ is 33 MB. */
const MAX_CACHED_BYTES = 48 * 1024 * 1024;

/**
 * Files of an npm package the editor loads (editor-client's public/, core node icons), answered
 * with a strong ETag, conditional 304s and gzip or brotli. The packages do not change while
 * Runnel runs, so each file is read and compressed once and kept; only the files browsers ask
 * for are held. A path without a file is not remembered (each anonymous request for a new one
 * grew the cache for good), and the files kept are bounded in bytes, the least recently used
 * dropped first.
 */
export class StaticFiles {
  /** Most recently used last; a read still under way is shared by the requests waiting for it. */
  private readonly cache = new Map<string, Slot>();
  private cachedBytes = 0;

  constructor(private readonly root: string, private readonly maxBytes = MAX_CACHED_BYTES) {}

  /** The absolute path of `rel` inside the root, or null when it would step out of it. */
  resolve(rel: string): string | null {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rel);
    } catch {
      return null;
    }
    if (decoded.includes('\0')) return null;
    const file = path.resolve(this.root, '.' + path.posix.normalize('/' + decoded));
    return file.startsWith(this.root + path.sep) ? file : null;
  }

  /** Sends the file or returns false when there is none (the caller answers 404). */
  async serve(request: FastifyRequest, reply: FastifyReply, rel: string, opts: ServeOptions = {}): Promise<boolean> {
    const file = this.resolve(rel);
    if (!file) return false;
    const entry = await this.load(file);
    if (!entry) return false;
    reply.header('ETag', entry.etag);
    reply.header('Last-Modified', entry.mtime.toUTCString());
    reply.header('Cache-Control', opts.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    reply.header('Vary', 'Accept-Encoding');
    reply.type(entry.type);
    if (request.headers['if-none-match'] === entry.etag) {
      await reply.code(304).send();
      return true;
    }
    const encoding = this.encodingFor(request, entry);
    if (encoding) {
      reply.header('Content-Encoding', encoding);
      await reply.send(await (encoding === 'br' ? (entry.br ??= compressed(entry, 'br')) : (entry.gzip ??= compressed(entry, 'gzip'))));
    } else {
      await reply.send(entry.body);
    }
    return true;
  }

  private encodingFor(request: FastifyRequest, entry: Entry): 'br' | 'gzip' | undefined {
    return isCompressibleType(entry.type) ? pickEncoding(request, entry.body.length) : undefined;
  }

  /** How many paths are remembered (read or being read). */
  get size(): number {
    return this.cache.size;
  }

  private load(file: string): Promise<Entry | null> {
    const cached = this.cache.get(file);
    if (cached) {
      this.cache.delete(file);
      this.cache.set(file, cached);
      return cached.entry;
    }
    const slot: Slot = { entry: read(file), bytes: 0 };
    this.cache.set(file, slot);
    const forget = () => {
      if (this.cache.get(file) === slot) this.cache.delete(file);
    };
    slot.entry.then((entry) => {
      if (!entry || entry.body.length > this.maxBytes) return forget();
      if (this.cache.get(file) !== slot) return;
      slot.bytes = entry.body.length;
      this.cachedBytes += slot.bytes;
      this.evict();
    }, forget);
    return slot.entry;
  }

  /** Drops the least recently used files until those kept fit the budget. */
  private evict(): void {
    for (const [file, slot] of this.cache) {
      if (this.cachedBytes <= this.maxBytes) break;
      this.cache.delete(file);
      this.cachedBytes -= slot.bytes;
    }
  }
}

async function read(file: string): Promise<Entry | null> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return null;
  const body = await readFile(file);
  const sha1 = contentHash(body);
  return { body, sha1, etag: `"${sha1}"`, type: contentTypeOf(file), mtime: info.mtime };
}

/** The build's copy when there is one, else compressed now (kept by the caller). */
async function compressed(entry: Entry, encoding: Encoding): Promise<Buffer> {
  return (await readPrecompressed(entry.sha1, encoding)) ?? compress(entry.body, encoding);
}
