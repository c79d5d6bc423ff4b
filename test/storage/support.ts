import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';
import { resolveSettings, type Settings } from '../../src/settings.js';

/** Shared by the storage and credentials tests: temp user dirs and a logger whose lines can be read. */

export interface CapturedLog {
  log: Logger;
  /** Parsed log lines so far. */
  lines(): Array<Record<string, unknown>>;
  /** Messages of the lines at a pino level (40 warn, 50 error, 30 info). */
  messages(level: number): string[];
}

export function captureLog(): CapturedLog {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      raw.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const log = createLogger('debug', sink);
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, lines, messages: (level) => lines().filter((l) => l.level === level).map((l) => String(l.msg)) };
}

export async function makeTempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'runnel-'));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export function settingsFor(userDir: string, extra: Record<string, unknown> = {}): Settings {
  return resolveSettings({ userDir, ...extra });
}

export async function readJsonFile(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

export async function tempFilesIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.runnel-tmp'));
}
