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

export interface ServeOptions {
  /** The URL carried the package's cache buster: the answer may be kept for a year. */
  immutable?: boolean;
}

/**
 * Files of an npm package the editor loads (editor-client's public/, core node icons), answered
 * with a strong ETag, conditional 304s and gzip or brotli. The packages do not change while
 * Runnel runs, so each file is read and compressed once and kept; only the files browsers ask
 * for are held.
 */
export class StaticFiles {
  private readonly cache = new Map<string, Promise<Entry | null>>();

  constructor(private readonly root: string) {}

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

  private load(file: string): Promise<Entry | null> {
    let pending = this.cache.get(file);
    if (!pending) {
      pending = (async () => {
        const info = await stat(file).catch(() => null);
        if (!info?.isFile()) return null;
        const body = await readFile(file);
        const sha1 = contentHash(body);
        return { body, sha1, etag: `"${sha1}"`, type: contentTypeOf(file), mtime: info.mtime };
      })();
      this.cache.set(file, pending);
    }
    return pending;
  }
}

/** The build's copy when there is one, else compressed now (kept by the caller). */
async function compressed(entry: Entry, encoding: Encoding): Promise<Buffer> {
  return (await readPrecompressed(entry.sha1, encoding)) ?? compress(entry.body, encoding);
}
