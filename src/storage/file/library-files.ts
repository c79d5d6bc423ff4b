import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../../base/errors.js';
import { writeFileAtomic } from '../atomic-file.js';

/** A folder listing: sub-folder names, then files as `{fn, ...meta}`. */
export type LibraryListing = (string | Record<string, unknown>)[];

/** `// key: value` lines at the top of a non-flow entry carry its metadata (Node-RED's format). */
const META_LINE = /^\/\/ (\w+): (.*)/;

/**
 * The editor's local library in Node-RED's layout, `<userDir>/lib/<type>/<path>`: flows are
 * stored as sent; other entries (functions, templates) start with their metadata as comment lines.
 */
export class LibraryFiles {
  private readonly root: string;

  constructor(userDir: string) {
    this.root = path.join(userDir, 'lib');
  }

  private resolve(type: string, entry: string): string {
    if (!/^[\w-]+$/.test(type)) throw new RunnelError('invalid_request', 'A library type is letters, digits, _ and -');
    const dir = path.join(this.root, type);
    const file = path.resolve(dir, `.${path.posix.normalize(`/${entry}`)}`);
    if (file !== dir && !file.startsWith(dir + path.sep)) throw new RunnelError('not_found', 'No such library entry');
    return file;
  }

  async get(type: string, entry: string): Promise<string | LibraryListing> {
    const file = this.resolve(type, entry);
    const info = await stat(file).catch(() => null);
    if (info?.isFile()) {
      const text = await readFile(file, 'utf8');
      return type === 'flows' ? text : stripMeta(text);
    }
    if (!info) {
      // Node-RED answers an empty folder for a folder that does not exist yet.
      if (entry === '' || entry.endsWith('/')) return [];
      throw new RunnelError('not_found', 'No such library entry');
    }
    const dirs: string[] = [];
    const files: Record<string, unknown>[] = [];
    for (const e of await readdir(file, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) dirs.push(e.name);
      else if (e.isFile()) files.push({ ...(type === 'flows' ? {} : readMeta(await readFile(path.join(file, e.name), 'utf8'))), fn: e.name });
    }
    return [...dirs.sort(), ...files];
  }

  async save(type: string, entry: string, meta: Record<string, unknown>, body: string): Promise<void> {
    if (entry === '' || entry.endsWith('/')) throw new RunnelError('invalid_request', 'A library entry needs a file name');
    const file = this.resolve(type, entry);
    await mkdir(path.dirname(file), { recursive: true });
    let header = '';
    if (type !== 'flows') {
      for (const [key, value] of Object.entries(meta)) {
        if (/^\w+$/.test(key) && value !== undefined) header += `// ${key}: ${String(value).replace(/[\r\n]+/g, ' ')}\n`;
      }
    }
    await writeFileAtomic(file, header + body, { backup: false });
  }
}

function readMeta(text: string): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  for (const line of text.split('\n')) {
    const m = META_LINE.exec(line);
    if (!m) break;
    meta[m[1]] = m[2];
  }
  return meta;
}

function stripMeta(text: string): string {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && META_LINE.test(lines[i])) i++;
  return lines.slice(i).join('\n');
}
