/**
 * The `postgres` context store: flow and global context shared by every instance of a cluster.
 * Values live in memory, so the synchronous API works as with localfilesystem's cache; each write
 * is sent to the database at once (writes made together go in one transaction) and the other
 * instances re-read the keys it touched when the database tells them. Consistency is per top-level
 * key, last writer wins: `set('a.b', 1)` stores the whole of `a`. A callback passed to `set` runs
 * once the value is in the database (or with the error that kept it out; the value is then retried
 * with the next write). Values are stored as JSON, as the localfilesystem store writes them.
 *
 * What a primary-only tab writes (its flow's and its nodes' scopes, and what its nodes set in
 * global context) is written only with the primary's lease (SharedContext.write's `primaryOnly`):
 * a write the database refuses because the lease has passed on is dropped, not retried, and the
 * keys are read back from the database.
 */
import { SerialQueue } from '../../base/serial-queue.js';
import type { SharedContext, StorageChange } from '../../storage/contract.js';
import { LeaseLostError } from '../../storage/lease-lost.js';
import type { ContextCallback } from '../util/types.js';
import { normalisePropertyExpression } from '../util/expression.js';
import { stringifyContext } from './context-json.js';
import { MemoryStore } from './memory-store.js';
import type { ContextStore, StoreLogger } from './store.js';

export interface PostgresStoreSource {
  context: SharedContext;
  onChange(listener: (change: StorageChange) => void): () => void;
  /** Whether a scope belongs to primary-only work (none when absent). */
  primaryOnly?(scope: string): boolean;
}

/** scope → top-level keys written here and not yet in the database. */
type Pending = Map<string, Set<string>>;

/** Which batch a write goes in: `fenced` when its writer is primary-only work. */
type Batch = 'open' | 'fenced';
const BATCHES: readonly Batch[] = ['open', 'fenced'];

export class PostgresStore implements ContextStore {
  private readonly cache = new MemoryStore();
  /** A key is in the batch of its last writer only. */
  private pending: Record<Batch, Pending> = { open: new Map(), fenced: new Map() };
  private waiting: Array<{ scope: string; batch: Batch; cb: ContextCallback }> = [];
  /** Flushes one at a time, so writes reach the database in the order they were made. */
  private readonly flushes = new SerialQueue();
  private scheduled = false;
  private unsubscribe: (() => void) | undefined;
  /** Counts local writes and flushes: a refresh that saw it move re-reads. */
  private epoch = 0;

  constructor(private readonly source: PostgresStoreSource, private readonly log: StoreLogger) {}

  async open(): Promise<void> {
    for (const entry of await this.source.context.load()) this.cache.load(entry.scope, { [entry.key]: JSON.parse(entry.value) });
    this.unsubscribe = this.source.onChange((change) => {
      if (change.kind === 'context') void this.refresh(change.scope, change.keys);
      // The database is back: writes that failed meanwhile are sent again.
      else if (change.kind === 'resync' && BATCHES.some((b) => this.pending[b].size > 0)) void this.flush();
    });
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.flush();
  }

  get(scope: string, key: string | string[], cb?: ContextCallback): unknown {
    return this.cache.get(scope, key, cb);
  }

  set(scope: string, key: string | string[], value: unknown, cb?: ContextCallback, writer?: string): void {
    const batch: Batch = this.source.primaryOnly?.(writer ?? scope) ? 'fenced' : 'open';
    try {
      this.cache.set(scope, key, value);
      for (const k of Array.isArray(key) ? key : [key]) this.touch(scope, String(normalisePropertyExpression(k)[0]), batch);
    } catch (err) {
      if (!cb) throw err;
      cb(err as Error);
      return;
    }
    if (cb) this.waiting.push({ scope, batch, cb });
    this.schedule();
  }

  keys(scope: string, cb?: ContextCallback): string[] | undefined {
    return this.cache.keys(scope, cb);
  }

  async delete(scope: string): Promise<void> {
    await this.cache.delete(scope);
    for (const b of BATCHES) this.pending[b].delete(scope);
    await this.source.context.deleteScope(scope);
  }

  async clean(activeNodes: string[]): Promise<void> {
    await this.cache.clean(activeNodes);
    await this.source.context.clean(activeNodes);
  }

  private touch(scope: string, key: string, batch: Batch): void {
    this.epoch++;
    const other = this.pending[batch === 'open' ? 'fenced' : 'open'];
    if (other.get(scope)?.delete(key) && other.get(scope)!.size === 0) other.delete(scope);
    let keys = this.pending[batch].get(scope);
    if (!keys) this.pending[batch].set(scope, (keys = new Set()));
    keys.add(key);
  }

  private isPending(scope: string, key: string): boolean {
    return BATCHES.some((b) => this.pending[b].get(scope)?.has(key) === true);
  }

  /** Writes made in the same tick go to the database together. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private flush(): Promise<void> {
    return this.flushes.run(async () => {
      this.epoch++;
      const pending = this.pending;
      const waiting = this.waiting;
      this.pending = { open: new Map(), fenced: new Map() };
      this.waiting = [];
      const failed = { open: new Map<string, Error>(), fenced: new Map<string, Error>() };
      for (const batch of BATCHES) {
        const err = await this.write([...pending[batch]], batch);
        if (err) for (const [scope] of pending[batch]) failed[batch].set(scope, err);
      }
      for (const { scope, batch, cb } of waiting) cb(failed[batch].get(scope));
    });
  }

  /** Sends one batch of pending keys; returns the error that kept it out of the database. */
  private async write(pending: Array<[string, Set<string>]>, batch: Batch): Promise<Error | undefined> {
    if (pending.length === 0) return undefined;
    const changes: Array<{ scope: string; key: string; value: string | undefined }> = [];
    for (const [scope, keys] of pending) {
      const data = this.cache.data(scope);
      for (const key of keys) {
        const value = data?.[key];
        changes.push({ scope, key, value: value === undefined ? undefined : stringifyContext(value).json });
      }
    }
    try {
      await this.source.context.write(changes, batch === 'fenced');
      return undefined;
    } catch (err) {
      if (err instanceof LeaseLostError) {
        // The new primary's values win: this instance's give way to what the database holds.
        this.log.warn(`Context of a primary-only tab not written: ${err.message}`);
        for (const [scope, keys] of pending) void this.refresh(scope, [...keys]);
      } else {
        // Kept for the next write, unless a newer local change to the key is already pending.
        for (const [scope, keys] of pending) for (const key of keys) if (!this.isPending(scope, key)) this.touch(scope, key, batch);
        this.log.warn(`Writing shared context failed: ${(err as Error).message}`);
      }
      return err as Error;
    }
  }

  /**
   * Another instance wrote: take its values. A read that raced a local write (the write was set or
   * sent while the read ran) may predate it, so it is read again; keys still pending are skipped.
   */
  private async refresh(scope: string, keys: string[] | null): Promise<void> {
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        await this.flushes.drain();
        const epoch = this.epoch;
        const rows = await this.source.context.read(scope, keys);
        if (epoch !== this.epoch) continue;
        const stored = new Map(rows.map((r) => [r.key, r.value]));
        const affected = keys ?? [...new Set([...(this.cache.keys(scope) ?? []), ...stored.keys()])];
        const data = this.cache.data(scope);
        for (const key of affected) {
          if (this.isPending(scope, key)) continue;
          const text = stored.get(key);
          if (text !== undefined) this.cache.load(scope, { [key]: JSON.parse(text) });
          else if (data) delete data[key];
        }
        return;
      }
      this.log.warn(`Shared context scope ${scope} kept changing locally; its remote values are taken at the next change`);
    } catch (err) {
      this.log.warn(`Reading shared context failed: ${(err as Error).message}`);
    }
  }
}
