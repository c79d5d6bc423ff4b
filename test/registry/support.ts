import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { cp, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { createLogger } from '../../src/base/log.js';
import { Registry, type NodeSetInfo } from '../../src/registry/registry.js';
import { nodeClasses } from '../../src/runtime/flows/node-classes.js';
import { createRedApi, type RedApiOptions } from '../../src/runtime/red-api/red-api.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { findNpm } from '../../src/registry/npm.js';
import type { Runtime } from '../../src/runtime/runtime.js';

/** test/fixtures/modules in the source tree (fixtures are not compiled). */
export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/modules');

/** Copies a fixture module into `parent` (tests never write into the source tree). */
export async function copyFixture(name: string, parent: string, as = name): Promise<string> {
  const dir = path.join(parent, as);
  await cp(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** `npm pack` of a module directory, offline; returns the .tgz path. */
export async function npmPack(dir: string, dest: string): Promise<string> {
  const npm = findNpm()!;
  await promisify(execFile)(npm.file, [...npm.args, 'pack', '--ignore-scripts', '--pack-destination', dest], { cwd: dir, timeout: 60_000 });
  const tgz = (await readdir(dest)).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error('npm pack produced no tarball');
  return path.join(dest, tgz);
}

export interface RawEntry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'FIFO';
  body?: string;
  linkpath?: string;
}

/** A gzip tar built header by header, so tests can make archives no well-behaved packer would. */
export function rawTarball(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const header = new Header({ path: e.path, type: e.type ?? 'File', size: body.length, mode: 0o644, linkpath: e.linkpath, mtime: new Date(0) });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (body.length) blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

export const NODE_RED_PACKAGE = JSON.stringify({ name: 'node-red-contrib-evil', version: '1.0.0', 'node-red': { nodes: { evil: 'evil.js' } } });

/**
 * The slice of a Runtime the loader uses (registry, settings, log), for unit tests that need no
 * server. Cast: createRedApi reads the rest lazily, only when nodes are created.
 */
export function fakeRuntime(userDir: string): Runtime {
  const settings = resolveSettings({ userDir, logging: { level: 'silent' } });
  const registry = new Registry(nodeClasses);
  const log = createLogger('silent');
  const host = {
    settings,
    registry,
    log,
    events: new EventEmitter(),
    services: { registry, nodes: new Map() },
    redApiFor: (set: NodeSetInfo, options: RedApiOptions) => createRedApi(host as unknown as Runtime, set, options),
  };
  return host as unknown as Runtime;
}
