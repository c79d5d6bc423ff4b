import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A fresh directory under the OS temp dir; the caller removes it with `removeDir`. */
export async function tempDir(prefix = 'runnel-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Removes a directory tree; a missing one is fine, so it is safe in `finally` and `after`. */
export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
