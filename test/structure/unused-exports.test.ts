import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { ROOT } from '../helpers/process.js';

const SCRIPT = path.join(ROOT, 'scripts', 'unused-exports.mjs');

/** Runs the lint's unused-export check on a project; the exit code and what it listed. */
async function check(dir: string): Promise<{ code: number; listed: string[] }> {
  try {
    await promisify(execFile)(process.execPath, [SCRIPT, dir]);
    return { code: 0, listed: [] };
  } catch (err) {
    const { code, stderr } = err as { code: number; stderr: string };
    return { code, listed: stderr.split('\n').slice(1).map((l) => l.trim()).filter(Boolean) };
  }
}

describe('unused-export check (npm run lint)', () => {
  it('lists the exports of src/ that no other file refers to, however the others import them', { timeout: 60_000 }, async () => {
    const dir = await tempDir();
    try {
      await mkdir(path.join(dir, 'src'));
      await mkdir(path.join(dir, 'test'));
      const files: Record<string, string> = {
        'package.json': '{"type": "module"}',
        'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [] }, include: ['src/**/*.ts', 'test/**/*.ts'] }),
        'src/a.ts': [
          'export const named = 1;',
          'export const viaNamespace = 2;',
          'export const viaDynamicImport = 3;',
          'export function onlyLocal(): number { return 4; }',
          'export const nowhere = 5;',
          '/** Named by an exported signature of its own file. */',
          'export interface Shape { x: number }',
          'export type DeadType = string;',
          'export function shaped(s: Shape): number { return s.x + onlyLocal(); }',
        ].join('\n'),
        'src/b.ts': "import { named } from './a.js';\nimport * as a from './a.js';\nexport const sum = named + a.viaNamespace + a.shaped({ x: 1 });\n",
        'test/b.test.ts': "import { sum } from '../src/b.js';\nexport const total = sum + (await import('../src/a.js')).viaDynamicImport;\n",
      };
      for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
      const { code, listed } = await check(dir);
      assert.equal(code, 1);
      assert.deepEqual(listed, ['src/a.ts: DeadType', 'src/a.ts: nowhere', 'src/a.ts: onlyLocal']);
    } finally {
      await removeDir(dir);
    }
  });
});
