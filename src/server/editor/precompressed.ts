import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { MIN_COMPRESS } from './compress.js';
import { isCompressibleFile } from './file-types.js';

/**
 * Compressed copies of the editor's files, made once by the build (`npm ci` runs it after tsc)
 * instead of by the first editor to load after each start, which waited for ~10 MB of brotli.
 * Copies are named by the SHA-1 of the original, so a changed package never gets a stale copy;
 * a file without one is compressed on first use as before.
 */
const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../editor-precompressed');

export type Encoding = 'br' | 'gzip';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
/**
 * Higher than the serving path's level 4: the build pays once (seconds), every editor load gets
 * ~12% fewer bytes. 10 and 11 cost ten times more for another 1-2%.
 */
const BUILD_BROTLI_QUALITY = 9;

const fileOf = (sha1: string, encoding: Encoding) => path.join(DIR, `${sha1}.${encoding === 'br' ? 'br' : 'gz'}`);

/** The SHA-1 that names a file's compressed copies (the same as its ETag's). */
export const contentHash = (body: Buffer) => createHash('sha1').update(body).digest('base64url');

/** The copy the build made, or undefined. */
export function readPrecompressed(sha1: string, encoding: Encoding): Promise<Buffer | undefined> {
  return readFile(fileOf(sha1, encoding)).catch(() => undefined);
}

async function* filesUnder(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (entry.isFile()) yield full;
  }
}

/** Compresses every compressible file under `root` that has no copy yet; returns counts. */
export async function precompress(root: string): Promise<{ files: number; made: number; bytes: number }> {
  await mkdir(DIR, { recursive: true });
  let files = 0;
  let made = 0;
  let bytes = 0;
  for await (const file of filesUnder(root)) {
    if (!isCompressibleFile(file) || (await stat(file)).size < MIN_COMPRESS) continue;
    files++;
    const body = await readFile(file);
    const sha1 = contentHash(body);
    for (const encoding of ['br', 'gzip'] as const) {
      const target = fileOf(sha1, encoding);
      if (await stat(target).catch(() => null)) continue;
      const packed = await (encoding === 'br' ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BUILD_BROTLI_QUALITY } }) : gzip(body, { level: 9 }));
      // Written aside and renamed: an interrupted build leaves no half copy to be served.
      await writeFile(`${target}.tmp`, packed);
      await rename(`${target}.tmp`, target);
      made++;
      bytes += packed.length;
    }
  }
  return { files, made, bytes };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  const client = path.dirname(createRequire(import.meta.url).resolve('@node-red/editor-client/package.json'));
  const { files, made, bytes } = await precompress(path.join(client, 'public'));
  process.stdout.write(`editor files: ${files} compressible, ${made} copies made (${(bytes / 1e6).toFixed(1)} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
