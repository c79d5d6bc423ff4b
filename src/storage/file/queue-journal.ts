import { open, readFile, rename, type FileHandle } from 'node:fs/promises';

/**
 * One queue's append-only journal: a line of JSON per change. Appends made while a write is under
 * way are written together and made durable by one fdatasync, so many producers share the cost of
 * a disk flush instead of paying one each. A line cut short by a crash is ignored at replay.
 */
export class Journal {
  private handle: FileHandle | undefined;
  private pending: string[] = [];
  private waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private writing: Promise<void> | undefined;
  private snapshot: (() => unknown[]) | undefined;
  /** Lines in the file, for deciding when to compact. */
  lines = 0;

  constructor(readonly file: string) {}

  /** The records in the file, in order; none when it does not exist. */
  async replay(): Promise<unknown[]> {
    const text = await readFile(this.file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return '';
      throw e;
    });
    const records: unknown[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        records.push(JSON.parse(line));
      } catch {
        // The last line of a crash: its append never completed, so nobody was told it was stored.
      }
    }
    this.lines = records.length;
    return records;
  }

  /** Appends records; resolves once they are on disk. */
  append(records: unknown[]): Promise<void> {
    for (const r of records) this.pending.push(`${JSON.stringify(r)}\n`);
    this.lines += records.length;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.writing) this.writing = this.flush();
    return done;
  }

  /**
   * Replaces the file with the records `snapshot` gives (written to a new file, synced, renamed over
   * the old). `snapshot` runs between two writes and must describe every record appended so far,
   * those still waiting included: they are then not written again, and their appends resolve when
   * the new file is in place.
   */
  compact(snapshot: () => unknown[]): void {
    this.snapshot = snapshot;
    if (!this.writing) this.writing = this.flush();
  }

  async close(): Promise<void> {
    await this.idle();
    await this.handle?.close();
    this.handle = undefined;
  }

  private async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async flush(): Promise<void> {
    while (this.pending.length || this.snapshot) {
      const waiters = this.waiters;
      this.waiters = [];
      try {
        if (this.snapshot) await this.rewrite(this.snapshot());
        else await this.write(this.pending.join(''));
        for (const w of waiters) w.resolve();
      } catch (e) {
        for (const w of waiters) w.reject(e);
      }
    }
    this.writing = undefined;
  }

  private async write(text: string): Promise<void> {
    this.pending = [];
    this.handle ??= await open(this.file, 'a');
    await this.handle.writeFile(text);
    await this.handle.datasync();
  }

  private async rewrite(records: unknown[]): Promise<void> {
    this.snapshot = undefined;
    this.pending = [];
    await this.handle?.close();
    this.handle = undefined;
    const tmp = `${this.file}.tmp`;
    const out = await open(tmp, 'w');
    try {
      await out.writeFile(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
      await out.datasync();
    } finally {
      await out.close();
    }
    await rename(tmp, this.file);
    this.lines = records.length;
  }
}
