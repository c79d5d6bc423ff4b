/**
 * Node-RED's `localfilesystem` context store, with its on-disk layout so a user dir moves between
 * Node-RED and Runnel:
 *
 *   <dir or userDir>/<base = "context">/
 *     global/global.json        global scope
 *     <flowId>/flow.json        flow scope
 *     <flowId>/<nodeId>.json    node scope (`nodeId:flowId`)
 *
 * With `cache` (the default) every value lives in memory, so synchronous get/set work; a write
 * marks its scope dirty and the dirty scopes are written at most every `flushInterval` seconds and
 * on close. Without it every call reads or writes the file, so only the callback forms work. Writes
 * are crash-safe (temp file, fsync, rename): a killed process leaves the old or the new file.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { readTextIfExists, removeStaleTemps, writeFileAtomic } from '../../storage/atomic-file.js';
import { SerialQueue } from '../../base/serial-queue.js';
import { setObjectProperty } from '../util/properties.js';
import type { ContextCallback } from '../util/types.js';
import { stringifyContext } from './context-json.js';
import { MemoryStore, readKey } from './memory-store.js';
import { isActiveScope, type ContextStore, type StoreLogger } from './store.js';

export interface FileStoreConfig {
  /** The directory `base` is created in; the user dir when absent. */
  dir?: string;
  base?: string;
  cache?: boolean;
  /** Seconds between writes of changed scopes when caching. */
  flushInterval?: number;
  /** What Node-RED copies into every store's config. */
  settings?: { userDir?: string };
}

const NO_SYNC_ACCESS = 'File Store cache disabled - only asynchronous access supported';

export class FileStore implements ContextStore {
  /** Absolute directory holding the scope directories. */
  private readonly baseDir: string;
  private readonly cache: MemoryStore | undefined;
  private readonly flushMs: number;
  /** Every disk operation, in order: a read sees earlier writes, clean never races a flush. */
  private readonly disk = new SerialQueue();
  private pending = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private closing = false;
  /** Scopes already reported as circular, so a flush every interval does not repeat the warning. */
  private circular = new Set<string>();

  constructor(config: FileStoreConfig, private readonly log: StoreLogger) {
    const dir = config.dir ?? config.settings?.userDir;
    if (!dir) throw new Error('localfilesystem needs config.dir or a user dir');
    this.baseDir = path.resolve(dir, config.base ?? 'context');
    if (config.cache ?? true) this.cache = new MemoryStore();
    this.flushMs = Math.max(0, config.flushInterval ?? 30) * 1000;
  }

  /** Loads every scope into the cache before flows start; an unreadable file stops the start. */
  async open(): Promise<void> {
    await mkdir(this.baseDir, { recursive: true });
    const files = await this.listFiles();
    if (!this.cache) return;
    for (const { scope, file } of files) this.cache.load(scope, parseScope(await readTextIfExists(file), file));
  }

  close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.cache) void this.disk.run(() => this.flush());
    return this.disk.drain();
  }

  get(scope: string, key: string | string[], cb?: ContextCallback): unknown {
    if (this.cache) return this.cache.get(scope, key, cb);
    if (typeof cb !== 'function') throw new Error(NO_SYNC_ACCESS);
    this.disk.run(() => this.readScope(scope)).then((data) => {
      let values: unknown[];
      try {
        values = Array.isArray(key) ? key.map((k) => readKey(data, k)) : [readKey(data, key)];
      } catch (err) {
        cb(err as Error);
        return;
      }
      cb(null, ...values);
    }, cb);
    return undefined;
  }

  set(scope: string, key: string | string[], value: unknown, cb?: ContextCallback): void {
    try {
      this.fileOf(scope);
    } catch (err) {
      if (!cb) throw err;
      cb(err as Error);
      return;
    }
    if (this.cache) {
      this.cache.set(scope, key, value, cb);
      this.pending.add(scope);
      this.scheduleFlush();
      return;
    }
    this.disk.run(async () => {
      const data = await this.readScope(scope);
      const keys = Array.isArray(key) ? key : [key];
      const values = !Array.isArray(key) ? [value] : Array.isArray(value) ? value : [value];
      for (let i = 0; i < keys.length; i++) setObjectProperty(data, keys[i], i < values.length ? values[i] : null);
      await this.writeScope(scope, data);
    }).then(
      () => cb?.(null),
      (err: Error) => (cb ? cb(err) : this.log.error(`Error writing context: ${err.message}`)),
    );
  }

  keys(scope: string, cb?: ContextCallback): string[] | undefined {
    if (this.cache) return this.cache.keys(scope, cb);
    if (typeof cb !== 'function') throw new Error('Callback must be a function');
    this.disk.run(() => this.readScope(scope)).then((data) => cb(null, Object.keys(data)), cb);
    return undefined;
  }

  async delete(scope: string): Promise<void> {
    this.pending.delete(scope);
    await this.cache?.delete(scope);
    await this.disk.run(() => rm(this.fileOf(scope), { force: true }));
  }

  /** Removes the directories of flows and the files of nodes that are no longer deployed. */
  async clean(activeNodes: string[]): Promise<void> {
    const active = new Set(activeNodes);
    // A removed node's unflushed values must not bring its file back.
    for (const scope of this.pending) if (!isActiveScope(scope, active)) this.pending.delete(scope);
    this.circular.clear();
    await this.cache?.clean(activeNodes);
    await this.disk.run(async () => {
      for (const { dir, name } of await this.listFiles()) {
        if (dir === 'global') continue;
        if (!active.has(dir)) await rm(path.join(this.baseDir, dir), { recursive: true, force: true });
        else if (name !== 'flow.json' && !active.has(name.slice(0, -'.json'.length))) await rm(path.join(this.baseDir, dir, name), { force: true });
      }
    });
  }

  private scheduleFlush(): void {
    // A pending flush takes this change too; while closing, close's own flush does.
    if (this.flushTimer || this.closing) return;
    this.flushTimer = setTimeout(() => {
      void this.disk.run(() => this.flush());
    }, this.flushMs);
    this.flushTimer.unref();
  }

  /** Writes the dirty scopes; a failure is logged and does not stop the others. */
  private async flush(): Promise<void> {
    this.flushTimer = undefined;
    const scopes = [...this.pending];
    this.pending = new Set();
    await Promise.all(
      scopes.map((scope) =>
        this.writeScope(scope, this.cache!.data(scope) ?? {}).catch((err: Error) => this.log.error(`Error writing context: ${err.message}`)),
      ),
    );
  }

  private async readScope(scope: string): Promise<Record<string, unknown>> {
    const file = this.fileOf(scope);
    return parseScope(await readTextIfExists(file), file);
  }

  private async writeScope(scope: string, data: unknown): Promise<void> {
    const file = this.fileOf(scope);
    const { json, circular } = stringifyContext(data);
    if (!circular) this.circular.delete(scope);
    else if (!this.circular.has(scope)) {
      this.circular.add(scope);
      this.log.warn(`Context ${scope} contains a circular reference that cannot be persisted`);
    }
    await mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, json, { backup: false });
  }

  /** Node-RED's getStoragePath, refusing ids that would leave the base directory. */
  private fileOf(scope: string): string {
    const colon = scope.indexOf(':');
    const [dir, name] = scope === 'global' ? ['global', 'global'] : colon === -1 ? [scope, 'flow'] : [scope.slice(colon + 1), scope.slice(0, colon)];
    for (const part of [dir, name]) {
      if (!part || part === '.' || part === '..' || /[/\\\0]/.test(part)) throw new Error(`Context scope '${scope}' cannot be stored in a file`);
    }
    return path.join(this.baseDir, dir, `${name}.json`);
  }

  /**
   * The `.json` files one level down, with their scopes as Node-RED derives them (every file in
   * `global/` feeds the global scope). Temp files of writes a crash interrupted are removed.
   */
  private async listFiles(): Promise<{ dir: string; name: string; scope: string; file: string }[]> {
    const found: { dir: string; name: string; scope: string; file: string }[] = [];
    let entries;
    try {
      entries = await readdir(this.baseDir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return found;
      throw err;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.') || !entry.isDirectory()) continue;
      const dir = entry.name;
      await removeStaleTemps(path.join(this.baseDir, dir));
      for (const name of await readdir(path.join(this.baseDir, dir))) {
        if (!name.endsWith('.json')) continue;
        const scope = dir === 'global' ? 'global' : name === 'flow.json' ? dir : `${name.slice(0, -'.json'.length)}:${dir}`;
        found.push({ dir, name, scope, file: path.join(this.baseDir, dir, name) });
      }
    }
    return found;
  }
}

function parseScope(text: string | undefined, file: string): Record<string, unknown> {
  if (!text) return {};
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error(`Invalid JSON in context file '${file}'`);
  return data as Record<string, unknown>;
}
