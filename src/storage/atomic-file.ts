import { randomBytes } from 'node:crypto';
import { access, copyFile, link, lstat, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Crash-safe file replacement: the content goes to a uniquely named temp file in the same
 * directory (so the rename stays on one file system and is atomic), is fsynced, the current file is
 * copied to its backup, the temp file is renamed over the target and the directory is fsynced so
 * the rename itself survives a power cut. A reader therefore sees either the old or the new file,
 * never a torn one, whenever the process dies.
 */

const TEMP_SUFFIX = '.runnel-tmp';
const TEMP_PATTERN = /^\..+\.[0-9a-f]{12}\.runnel-tmp$/;

function tempPathFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
}

/** `.flows.json.backup` for `flows.json`; a dot file keeps its own dot (`.sessions.json.backup`). */
export function backupPathFor(file: string): string {
  const base = path.basename(file);
  return path.join(path.dirname(file), `${base.startsWith('.') ? '' : '.'}${base}.backup`);
}

export interface AtomicWriteOptions {
  /** Copy the current file to its backup before replacing it. */
  backup: boolean;
  /** Permission bits of a newly written file. */
  mode?: number;
}

export async function writeFileAtomic(file: string, content: string | Uint8Array, options: AtomicWriteOptions): Promise<void> {
  const tmp = tempPathFor(file);
  try {
    await writeAndSync(tmp, content, options.mode ?? 0o644);
    if (options.backup) await copyToBackup(file);
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await syncDir(path.dirname(file));
}

async function writeAndSync(file: string, content: string | Uint8Array, mode: number): Promise<void> {
  const handle = await open(file, 'wx', mode);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncFile(file: string, flags: 'r' | 'r+'): Promise<void> {
  const handle = await open(file, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The backup is itself replaced atomically, so a crash mid-copy cannot destroy the previous backup.
 * It is a second name for the current file rather than a copy of its bytes (a 23 MB flows file of
 * 100,000 nodes was read, written and fsynced again at every deploy): the file is about to be
 * replaced by a rename, never rewritten in place, so once the rename is done the backup alone holds
 * the old content. The file is fsynced first, as the copy was, in case someone else wrote it.
 */
async function copyToBackup(file: string): Promise<void> {
  const backup = backupPathFor(file);
  const tmp = tempPathFor(backup);
  try {
    await syncFile(file, 'r');
    const copy = async () => {
      await copyFile(file, tmp);
      await syncFile(tmp, 'r+');
    };
    // A symbolic link would be linked itself, not its content; copied as before.
    if ((await lstat(file)).isSymbolicLink()) await copy();
    else {
      await link(file, tmp).catch((e: NodeJS.ErrnoException) => {
        // A file system without hard links.
        if (e.code === 'ENOENT') throw e;
        return copy();
      });
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    await rename(tmp, backup);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms (Windows) and file systems cannot fsync a directory; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}

/** Removes temp files a killed process left behind. Returns the names removed. */
export async function removeStaleTemps(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => TEMP_PATTERN.test(n));
  for (const name of names) await unlink(path.join(dir, name)).catch(() => undefined);
  return names;
}

export async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/** The file's text, or undefined when it does not exist. */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
