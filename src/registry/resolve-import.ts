import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const CONDITIONS = ['import', 'node', 'default'];

/**
 * Where `import(name)` would find a bare package name for code in `fromDir`: Node's ESM lookup
 * (node_modules folders upwards, the package's `exports` with the import conditions, else
 * `main`). `require.resolve` cannot stand in for it: it misses packages that only export for
 * `import`. Returns undefined when nothing is found there.
 */
export function resolveImport(name: string, fromDir: string): string | undefined {
  const found = lookup(name, fromDir);
  return found && inside(found.pkgDir, found.file) ? found.file : undefined;
}

/** An entry point (or `exports` target) may not lead out of its package. */
function inside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function lookup(name: string, fromDir: string): { pkgDir: string; file: string } | undefined {
  const parts = name.split('/');
  const pkgName = name.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const subpath = `.${name.slice(pkgName.length)}`;
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    const pkgDir = path.join(dir, 'node_modules', pkgName);
    if (existsSync(path.join(pkgDir, 'package.json'))) {
      const file = entryOf(pkgDir, subpath);
      return file === undefined ? undefined : { pkgDir, file };
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

function entryOf(pkgDir: string, subpath: string): string | undefined {
  let pkg: { exports?: unknown; main?: unknown };
  try {
    pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as typeof pkg;
  } catch {
    return undefined;
  }
  if (pkg.exports !== undefined) {
    const target = pick(exportFor(pkg.exports, subpath));
    return typeof target === 'string' ? path.join(pkgDir, target) : undefined;
  }
  if (subpath !== '.') return path.join(pkgDir, subpath);
  const main = typeof pkg.main === 'string' ? pkg.main : 'index.js';
  const file = path.join(pkgDir, main);
  return existsSync(file) || !existsSync(`${file}.js`) ? file : `${file}.js`;
}

/** The `exports` entry for a subpath: sugar (a string or conditions only) counts as ".". */
function exportFor(exports: unknown, subpath: string): unknown {
  if (typeof exports === 'string' || Array.isArray(exports)) return subpath === '.' ? exports : undefined;
  if (exports === null || typeof exports !== 'object') return undefined;
  const map = exports as Record<string, unknown>;
  const hasSubpaths = Object.keys(map).some((k) => k.startsWith('.'));
  if (!hasSubpaths) return subpath === '.' ? map : undefined;
  return map[subpath];
}

/** Follows conditions (import, node, default) and fallback arrays down to a path. */
function pick(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) {
    for (const t of target) {
      const found = pick(t);
      if (found) return found;
    }
    return undefined;
  }
  if (target === null || typeof target !== 'object') return undefined;
  const conditions = target as Record<string, unknown>;
  for (const condition of CONDITIONS) {
    if (condition in conditions) {
      const found = pick(conditions[condition]);
      if (found) return found;
    }
  }
  return undefined;
}
