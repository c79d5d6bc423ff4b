import { mkdir, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../base/log.js';
import { exists, readTextIfExists, removeStaleTemps, writeFileAtomic } from '../atomic-file.js';
import type { FlowNodeConfig, Revision, RevisionInfo, RevisionMeta, StoredCredentials } from '../contract.js';

/**
 * The revision history of the file backend, in `<userDir>/.history/`: `index.json` lists every
 * kept revision (newest last) and is the commit point; the content lives beside it, the flows by
 * rev (`flows-<rev>.json`, shared by revisions with the same content) and the credentials document
 * by seq (`cred-<seq>.json`). A save writes the content, then the index, then the flows pair, so
 * after a crash the index's newest entry either describes the stored flows or is the interrupted
 * save, recognisable by its `prevRev` — `reconcile` drops it. Unreferenced content is deleted.
 */

const SECRET_FILE_MODE = 0o600;

interface IndexFile {
  $runnel: 1;
  revisions: RevisionInfo[];
}

export interface StoredPair {
  flows: FlowNodeConfig[];
  flowsJson: string;
  /** flowsJson as UTF-8, when the saver encoded it already. */
  flowsBytes?: Uint8Array;
  rev: string;
  credentials: StoredCredentials | null;
}

export class FileHistory {
  private readonly indexFile: string;
  private revisions: RevisionInfo[] = [];

  constructor(
    private readonly dir: string,
    /** How many revisions to keep (`flowHistory.max`). */
    private readonly max: number,
    private readonly log: Logger,
  ) {
    this.indexFile = path.join(dir, 'index.json');
  }

  async init(): Promise<void> {
    // The directory is made by the first revision, so an untouched user dir stays empty.
    await removeStaleTemps(this.dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
    this.revisions = await this.readIndex();
  }

  /**
   * Makes the newest revision describe the stored pair: drops a revision whose save did not reach
   * the flows file, or records flows nobody deployed (written by hand, or from before the history).
   */
  async reconcile(pair: StoredPair): Promise<void> {
    const head = this.revisions.at(-1);
    if (head === undefined) {
      if (pair.flows.length > 0) await this.append(pair, external(pair), pair.rev);
      return;
    }
    if (head.rev === pair.rev) return;
    if (head.prevRev === pair.rev) {
      this.log.warn({ seq: head.seq, rev: head.rev }, 'Dropped the revision of a deploy interrupted before its flows were saved');
      this.revisions = this.revisions.slice(0, -1);
      await this.writeIndex();
      await this.collect();
      return;
    }
    await this.append(pair, external(pair), head.rev);
  }

  /** Writes the content and commits the index; the caller then saves the flows pair. */
  async append(pair: StoredPair, meta: RevisionMeta, prevRev: string): Promise<RevisionInfo> {
    const seq = (this.revisions.at(-1)?.seq ?? 0) + 1;
    const info: RevisionInfo = { ...meta, seq, rev: pair.rev, prevRev };
    await mkdir(this.dir, { recursive: true });
    const flowsFile = this.flowsFile(pair.rev);
    if (!(await exists(flowsFile))) await writeFileAtomic(flowsFile, pair.flowsBytes ?? pair.flowsJson, { backup: false });
    if (pair.credentials !== null) {
      await writeFileAtomic(this.credFile(seq), JSON.stringify(pair.credentials), { backup: false, mode: SECRET_FILE_MODE });
    }
    this.revisions = [...this.revisions, info].slice(-this.max);
    await this.writeIndex();
    return info;
  }

  /** Deletes content no kept revision refers to; after the flows pair is saved, so never needed by a repair. */
  async collect(): Promise<void> {
    const keepFlows = new Set(this.revisions.map((r) => `flows-${r.rev}.json`));
    const keepCreds = new Set(this.revisions.map((r) => `cred-${r.seq}.json`));
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      const stale = (name.startsWith('flows-') && !keepFlows.has(name)) || (name.startsWith('cred-') && !keepCreds.has(name));
      if (stale) await unlink(path.join(this.dir, name)).catch(() => undefined);
    }
  }

  list(limit: number, before?: number): RevisionInfo[] {
    const out: RevisionInfo[] = [];
    for (let i = this.revisions.length - 1; i >= 0 && out.length < limit; i--) {
      const r = this.revisions[i];
      if (before === undefined || r.seq < before) out.push({ ...r, summary: structuredClone(r.summary) });
    }
    return out;
  }

  async get(ref: { seq: number } | { rev: string }): Promise<Revision | undefined> {
    const info = 'seq' in ref ? this.revisions.find((r) => r.seq === ref.seq) : this.revisions.findLast((r) => r.rev === ref.rev);
    if (info === undefined) return undefined;
    const flowsText = await readTextIfExists(this.flowsFile(info.rev));
    if (flowsText === undefined) {
      this.log.error({ seq: info.seq, rev: info.rev }, 'The content of a revision is missing');
      return undefined;
    }
    return { ...structuredClone(info), flows: JSON.parse(flowsText) as FlowNodeConfig[], credentials: await this.readCredentials(info.seq) };
  }

  private async readCredentials(seq: number): Promise<StoredCredentials | null> {
    const text = await readTextIfExists(this.credFile(seq));
    return text === undefined ? null : (JSON.parse(text) as StoredCredentials);
  }

  private flowsFile(rev: string): string {
    return path.join(this.dir, `flows-${rev}.json`);
  }

  private credFile(seq: number): string {
    return path.join(this.dir, `cred-${seq}.json`);
  }

  private async readIndex(): Promise<RevisionInfo[]> {
    const text = await readTextIfExists(this.indexFile);
    if (text === undefined) return [];
    try {
      const file = JSON.parse(text) as IndexFile;
      if (file.$runnel === 1 && Array.isArray(file.revisions)) return file.revisions;
    } catch {
      // Reported below; the history restarts rather than blocking the start-up.
    }
    this.log.error({ file: this.indexFile }, 'Unreadable revision history ignored');
    return [];
  }

  private writeIndex(): Promise<void> {
    const file: IndexFile = { $runnel: 1, revisions: this.revisions };
    return writeFileAtomic(this.indexFile, JSON.stringify(file), { backup: false });
  }
}

function external(pair: StoredPair): RevisionMeta {
  return { action: 'external', type: 'full', time: Date.now(), nodeCount: pair.flows.length, summary: {} };
}
