/**
 * Node-RED's `.config.nodes.json`: its registry's record of every module and node set, with the
 * enabled flag the palette sets. Runnel reads the flags at start, so a set disabled on Node-RED
 * stays disabled here, and writes its own flags into the same file, so Node-RED shows a set
 * disabled on Runnel disabled too. Everything else in the file is Node-RED's and kept as it is.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../storage/atomic-file.js';
import type { SetFlags } from './loader.js';
import type { ModuleInfo } from './registry.js';

const FILE = '.config.nodes.json';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The file's modules; undefined when there is none, it does not parse, or it is Node-RED 0.9's
 * format (without the `node-red` entry Node-RED itself checks for).
 */
async function read(userDir: string): Promise<Record<string, Json> | undefined> {
  return parse(await readText(userDir));
}

async function readText(userDir: string): Promise<string | undefined> {
  return readFile(path.join(userDir, FILE), 'utf8').catch(() => undefined);
}

function parse(text: string | undefined): Record<string, Json> | undefined {
  try {
    const parsed: unknown = JSON.parse(text ?? '');
    if (!isObject(parsed) || !isObject(parsed['node-red'])) return undefined;
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, Json] => isObject(e[1])));
  } catch {
    return undefined;
  }
}

/** The enabled flags Node-RED recorded, by module name. */
export async function readNodeRedFlags(userDir: string): Promise<Record<string, SetFlags>> {
  const flags: Record<string, SetFlags> = {};
  for (const [name, entry] of Object.entries((await read(userDir)) ?? {})) {
    if (!isObject(entry.nodes)) continue;
    const sets: SetFlags = {};
    for (const [set, info] of Object.entries(entry.nodes)) if (isObject(info) && typeof info.enabled === 'boolean') sets[set] = info.enabled;
    flags[name] = sets;
  }
  return flags;
}

/**
 * The modules Node-RED recorded with an enabled set, at the version it had (the one an update
 * waiting for a restart was to bring, if any): what Node-RED's autoInstall installs when missing.
 */
export async function listedNodeRedModules(userDir: string): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (const [name, entry] of Object.entries((await read(userDir)) ?? {})) {
    const sets = isObject(entry.nodes) ? Object.values(entry.nodes) : [];
    if (name === 'node-red' || !sets.some((set) => isObject(set) && set.enabled !== false)) continue;
    const version = entry.pending_version ?? entry.version;
    out.set(name, typeof version === 'string' ? version : undefined);
  }
  return out;
}

/**
 * Records the loaded modules' flags in Node-RED's format (`removed`: a module uninstalled here,
 * whose entry goes), when they change the file. A user dir without the file gets one only once a
 * set is disabled: until then Node-RED has nothing to learn from it.
 */
export async function writeNodeRedFlags(userDir: string, modules: Iterable<ModuleInfo>, removed?: string): Promise<void> {
  const text = await readText(userDir);
  const existing = parse(text);
  const loaded = [...modules];
  if (!existing && !loaded.some((m) => [...m.sets.values()].some((s) => !s.enabled))) return;
  const out = existing ?? {};
  if (removed !== undefined) delete out[removed];
  for (const mod of loaded) {
    if (mod.sets.size === 0) continue;
    const local = !mod.builtin;
    const entry = (out[mod.name] ??= { name: mod.name, version: mod.version, local, user: false, nodes: {} });
    const nodes: Json = isObject(entry.nodes) ? entry.nodes : {};
    for (const set of mod.sets.values()) {
      const known = nodes[set.name];
      const base = isObject(known) ? known : { name: set.name, types: set.types, local, user: false, module: mod.name };
      nodes[set.name] = { ...base, enabled: set.enabled };
    }
    entry.nodes = nodes;
  }
  // Node-RED's own indentation, and its backup beside the file.
  const next = JSON.stringify(out, null, 4);
  // Called at every start and module change: most change no flag, and a rewrite would also replace the backup.
  if (next !== text) await writeFileAtomic(path.join(userDir, FILE), next, { backup: true });
}
