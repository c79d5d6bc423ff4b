/** Where the file nodes read and write. */
import path from 'node:path';

/**
 * A relative name resolves against the `fileWorkingDirectory` setting when there is one, else
 * against the user directory (not the process's working directory, which depends on how the
 * runtime was started).
 */
export function resolveFilename(filename: string, settings: Record<string, unknown>): string {
  if (path.isAbsolute(filename)) return filename;
  const base = typeof settings.fileWorkingDirectory === 'string' && settings.fileWorkingDirectory ? settings.fileWorkingDirectory : String(settings.userDir ?? '.');
  return path.resolve(base, filename);
}

/** Node-RED before 3.0 had no `filenameType`: an empty name meant msg.filename, `${VAR}` an env var. */
export function upgradeFilename(filename: string, filenameType: unknown): { filename: string; type: string } {
  if (typeof filenameType === 'string' && filenameType !== '') return { filename, type: filenameType };
  if (filename === '') return { filename: 'filename', type: 'msg' };
  const env = /^\$\{([^}]+)\}$/.exec(filename);
  if (env) return { filename: env[1], type: 'env' };
  return { filename, type: 'str' };
}
