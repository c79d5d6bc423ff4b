import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileFunction } from 'node:vm';
import { parse } from 'acorn';
import { SettingsError } from './settings.js';

/**
 * Finding and reading the settings file. Node-RED's rule: without `--settings`, the user dir's
 * `settings.js` is the settings file when there is one.
 */

type Raw = Record<string, unknown>;

/** `DIR/settings.js` when it exists. */
export async function userDirSettingsFile(userDir: string): Promise<string | undefined> {
  const file = path.join(userDir, 'settings.js');
  try {
    return (await stat(file)).isFile() ? file : undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SettingsError(`cannot read settings file ${file}: ${(e as Error).message}`);
  }
}

/** Loads a settings file: .json, or a .js/.mjs/.cjs module exporting the settings object. */
export async function loadSettingsFile(file: string): Promise<{ raw: Raw; absolute: string }> {
  const absolute = path.resolve(file);
  const ext = path.extname(absolute).toLowerCase();
  let raw: unknown;
  try {
    if (ext === '.json') {
      raw = JSON.parse(await readFile(absolute, 'utf8'));
    } else if (ext === '.cjs') {
      raw = createRequire(import.meta.url)(absolute);
    } else if (ext === '.js' || ext === '.mjs') {
      raw = await importModule(absolute);
    } else {
      throw new SettingsError(`cannot read settings file ${absolute}: use .json, .js, .mjs or .cjs`);
    }
  } catch (e) {
    if (e instanceof SettingsError) throw e;
    throw new SettingsError(`cannot read settings file ${absolute}: ${await describeLoadError(e as Error, absolute)}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SettingsError(`settings file ${absolute} must export an object`);
  return { raw: raw as Raw, absolute };
}

async function importModule(absolute: string): Promise<unknown> {
  try {
    const mod = (await import(pathToFileURL(absolute).href)) as { default?: unknown };
    return mod.default ?? mod;
  } catch (e) {
    // A Node-RED settings.js is CommonJS; in a folder whose package.json says "type": "module"
    // (a user dir inside this repository, say) Node reads it as ES module code, so it is run as
    // the CommonJS module it is.
    if (!(e instanceof ReferenceError && /^(module|exports|require|__dirname|__filename) is not defined in ES module scope/.test(e.message))) throw e;
    return requireAsCommonJs(absolute);
  }
}

async function requireAsCommonJs(absolute: string): Promise<unknown> {
  const source = await readFile(absolute, 'utf8');
  const run = compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: absolute });
  const module = { exports: {} as unknown };
  run(module.exports, createRequire(absolute), module, absolute, path.dirname(absolute));
  return module.exports;
}

/** The first line of the error; for a syntax error, where it is (Node's ES module loader does not say). */
async function describeLoadError(e: Error, absolute: string): Promise<string> {
  const first = (e.message ?? String(e)).split('\n')[0];
  if (!(e instanceof SyntaxError) || path.extname(absolute) === '.json') return first;
  try {
    parse(await readFile(absolute, 'utf8'), { ecmaVersion: 'latest', sourceType: 'module', allowHashBang: true, locations: true });
  } catch (parseError) {
    const loc = (parseError as { loc?: { line: number; column: number } }).loc;
    if (loc) return `${first} at line ${loc.line}, column ${loc.column + 1}`;
  }
  return first;
}
