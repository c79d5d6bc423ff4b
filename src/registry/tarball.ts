import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { ReadEntry } from 'tar';
import { RunnelError, type ErrorCode } from '../base/errors.js';
import { parseNodeModulePackage, type NodeModulePackage } from './package.js';

const MAX_PACKAGE_JSON = 1024 * 1024;
/** Packages compress 3–10×; anything expanding beyond both bounds is a decompression bomb. */
const MAX_EXPANSION_RATIO = 100;
const EXPANSION_FLOOR = 16 * 1024 * 1024;
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory']);
const DEVICE_TYPES = new Set(['CharacterDevice', 'BlockDevice', 'FIFO']);

const reject = (code: ErrorCode, message: string) => new RunnelError(code, message);

/**
 * Checks an uploaded module tarball before anything is extracted or handed to npm: a gzip tar in
 * `npm pack` layout whose `package/package.json` has a node-red section, with no entry that could
 * write outside the package directory (traversal, absolute paths, links out, device files).
 * Returns the package it holds.
 */
export async function inspectTarball(file: string): Promise<NodeModulePackage> {
  await assertGzip(file);
  await assertNoBomb(file);
  let problem: RunnelError | undefined;
  let manifest: Buffer[] | undefined;
  let manifestSize = 0;
  const onReadEntry = (entry: ReadEntry) => {
    problem ??= entryProblem(entry);
    if (entry.path === 'package/package.json' && entry.type === 'File') {
      manifest = [];
      entry.on('data', (chunk: Buffer) => {
        manifestSize += chunk.length;
        if (manifestSize <= MAX_PACKAGE_JSON) manifest!.push(chunk);
      });
    }
  };
  try {
    const { list } = await import('tar');
    await list({ file, strict: true, onReadEntry });
  } catch (err) {
    throw reject('tarball_invalid', `The upload is not a readable tar archive: ${(err as Error).message}`);
  }
  if (problem) throw problem;
  if (!manifest) throw reject('not_node_module', 'The tarball has no package/package.json');
  if (manifestSize > MAX_PACKAGE_JSON) throw reject('invalid_module', 'package/package.json is too large');
  let pkg: unknown;
  try {
    pkg = JSON.parse(Buffer.concat(manifest).toString('utf8'));
  } catch {
    throw reject('invalid_module', 'package/package.json is not valid JSON');
  }
  try {
    return parseNodeModulePackage(pkg, 'The tarball');
  } catch (err) {
    // A missing node-red section is a bad upload, not a missing resource.
    if (err instanceof RunnelError) throw reject(err.code, err.message);
    throw err;
  }
}

async function assertGzip(file: string): Promise<void> {
  const fh = await open(file, 'r');
  try {
    const { bytesRead, buffer } = await fh.read(Buffer.alloc(2), 0, 2, 0);
    if (bytesRead < 2 || buffer[0] !== 0x1f || buffer[1] !== 0x8b) throw reject('tarball_not_gzip', 'The upload is not a gzip-compressed tarball (.tgz)');
  } finally {
    await fh.close();
  }
}

/** Inflates once without keeping anything, stopping as soon as the output passes the bound. */
async function assertNoBomb(file: string): Promise<void> {
  const limit = Math.max(EXPANSION_FLOOR, (await stat(file)).size * MAX_EXPANSION_RATIO);
  let expanded = 0;
  const bomb = reject('tarball_too_large', `The tarball expands to more than ${limit} bytes`);
  const counter = new Writable({
    write(chunk: Buffer, _enc, cb) {
      expanded += chunk.length;
      cb(expanded > limit ? bomb : null);
    },
  });
  try {
    await pipeline(createReadStream(file), createGunzip(), counter);
  } catch (err) {
    if (err === bomb) throw bomb;
    throw reject('tarball_invalid', `The upload is not a readable gzip stream: ${(err as Error).message}`);
  }
}

function isAbsolute(p: string): boolean {
  return p.startsWith('/') || p.startsWith('\\') || /^[a-zA-Z]:/.test(p);
}

function escapes(p: string): boolean {
  return p.split(/[\\/]+/).includes('..');
}

function entryProblem(entry: ReadEntry): RunnelError | undefined {
  const p = entry.path;
  if (isAbsolute(p)) return reject('tarball_absolute_path', `Tarball entry ${p} has an absolute path`);
  if (escapes(p)) return reject('tarball_path_traversal', `Tarball entry ${p} escapes the package directory`);
  if (DEVICE_TYPES.has(entry.type)) return reject('tarball_device_entry', `Tarball entry ${p} is a device or FIFO`);
  if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
    const link = entry.linkpath ?? '';
    // Symlink targets are relative to the link's directory, hard-link targets to the archive root.
    const base = entry.type === 'SymbolicLink' ? path.posix.dirname(p) : '.';
    const target = path.posix.normalize(path.posix.join(base, link.replace(/\\/g, '/')));
    const top = p.split('/')[0];
    if (isAbsolute(link) || target === '..' || target.startsWith('../') || target.split('/')[0] !== top) {
      return reject('tarball_link_outside', `Tarball entry ${p} links outside the package (${link})`);
    }
    return undefined;
  }
  if (!FILE_TYPES.has(entry.type)) return reject('tarball_unsupported_entry', `Tarball entry ${p} has unsupported type ${entry.type}`);
  return undefined;
}
