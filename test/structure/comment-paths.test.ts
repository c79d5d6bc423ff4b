import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/process.js';

/**
 * Every file a comment in src/ names exists, so a move or a removal cannot leave comments pointing
 * nowhere. A file name is a token of path characters ending in .ts, .js, .mjs, .cjs or .json that is
 * not in a URL, holds no placeholder (`<lang>`, `*`, `{a,b}`, `${x}`) and has a name before its
 * extension. It resolves when it exists relative to the repository, to src/ or to the comment's
 * folder, when some file of src/ ends with it (a bare name, or a path's tail such as
 * `lib/http-client.ts`), or, for .js, when the .ts it is compiled from does. Not checked:
 * - .json names without a project folder in front (flows.json, package.json, index.json,
 *   global/global.json): the user dir's and packages' data, not this repository's files;
 * - paths in an installed package (`@node-red/nodes/…`, any first segment in node_modules/);
 * - OUTSIDE, the few names of files that are neither.
 */
const OUTSIDE = new Set([
  // Products, not files.
  'Node.js',
  'MQTT.js',
  // Node-RED's settings file in the user dir.
  'settings.js',
  'DIR/settings.js',
  // Node-RED's own runtime files that the code follows (@node-red/runtime/lib/…, not installed here).
  'flows/util.js',
  'flows/index.js',
  'context/index.js',
  // npm's entry script (npm/bin/npm-cli.js), found beside the node executable.
  'npm-cli.js',
  // Node-RED's command-line entry (node-red/red.js), whose options bin/node-red.js takes.
  'red.js',
  // A core node's file name in @node-red/nodes, as Node-RED's nodesExcludes names it.
  '90-exec.js',
]);
const PROJECT_FOLDERS = ['src/', 'test/', 'bench/', 'test-ecosystem/', 'scripts/', 'docs/', 'deploy/', 'bin/'];

const SRC = path.join(ROOT, 'src');
const TOKEN = /[\w@./<>*{}$-]*\.(?:ts|js|mjs|cjs|json)(?![\w-]|\.\w)/g;
const URL_TEXT = /\w+:\/\/\S+/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : [full];
  });
}
/** Every file under src/, as a `/`-separated path from the repository with a leading `/`. */
const SRC_FILES = sourceFiles(SRC).map((f) => `/${path.relative(ROOT, f).split(path.sep).join('/')}`);

/** The text of every comment of a TypeScript file. */
function commentsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const seen = new Set<number>();
  const comments: string[] = [];
  // Every token's leading trivia: node boundaries alone miss a comment before a closing brace.
  const visit = (node: ts.Node) => {
    for (const child of node.getChildren(source)) {
      for (const range of ts.getLeadingCommentRanges(text, child.pos) ?? []) {
        if (seen.has(range.pos)) continue;
        seen.add(range.pos);
        comments.push(text.slice(range.pos, range.end));
      }
      visit(child);
    }
  };
  visit(source);
  return comments;
}

/** The file names a comment gives, as defined above. */
function fileNames(comment: string): string[] {
  return [...comment.replace(URL_TEXT, ' ').matchAll(TOKEN)]
    .map((m) => m[0].replace(/^\.\//, ''))
    .filter((name) => !/[<>*{}$]/.test(name) && !/(^|\/)\.[a-z]+$/.test(name) && !name.startsWith('/'))
    .filter((name) => !OUTSIDE.has(name))
    .filter((name) => !name.endsWith('.json') || PROJECT_FOLDERS.some((p) => name.startsWith(p)))
    .filter((name) => !name.includes('/') || !existsSync(path.join(ROOT, 'node_modules', name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!)));
}

function resolves(name: string, fromDir: string): boolean {
  const candidates = name.endsWith('.js') ? [name, name.replace(/\.js$/, '.ts')] : [name];
  return candidates.some(
    (c) => [ROOT, SRC, fromDir].some((base) => existsSync(path.resolve(base, c))) || SRC_FILES.some((f) => f.endsWith(`/${c}`)),
  );
}

/** `file: name` for each file name in the file's comments that names no file. */
function unresolvedIn(file: string, text: string): string[] {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  return commentsOf(file, text).flatMap((c) => fileNames(c).filter((n) => !resolves(n, path.dirname(file))).map((n) => `${rel}: ${n}`));
}

describe('file names in src/ comments', () => {
  it('name files that exist', () => {
    const files = SRC_FILES.filter((f) => f.endsWith('.ts')).map((f) => path.join(ROOT, f));
    assert.deepEqual(files.flatMap((f) => unresolvedIn(f, readFileSync(f, 'utf8'))), []);
  });

  it('are found in every kind of comment, and only file names are taken', () => {
    const file = path.join(SRC, 'runtime', 'flows', 'example.ts');
    const text = [
      '/** Moved: see runtime/flow.ts and src/settings.ts. Kept: flow.ts, ./node.js, src/base/errors.ts. */',
      'export function f(): void {',
      '  // Gone: lib/csv-text.ts. Not files: Node.js, `.js`, `<dir>/<name>.json`, flows.json,',
      '  // https://example.org/x/y.js, @node-red/nodes/core/common/20-inject.js, /openapi.json.',
      '  /* gone.js */',
      '}',
    ].join('\n');
    assert.deepEqual(unresolvedIn(file, text), [
      'src/runtime/flows/example.ts: runtime/flow.ts',
      'src/runtime/flows/example.ts: src/settings.ts',
      'src/runtime/flows/example.ts: lib/csv-text.ts',
      'src/runtime/flows/example.ts: gone.js',
    ]);
  });
});
