import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/process.js';

/**
 * The layering README's "Layout" describes, checked over every import in src/ (type-only imports
 * included): a file may import its own layer or a lower one, never a higher one. One entry per
 * folder; the runtime's folders are ordered among themselves the same way. The first entry whose
 * prefix matches a file wins, so the few single files listed come before their folder.
 */
const LAYERS: [prefix: string, layer: number][] = [
  ['base/', 0],
  ['settings/', 0.5],
  ['storage/', 1],
  ['credentials/', 2],
  ['auth/', 2],
  ['registry/', 2],
  ['queues/', 2],
  ['projects/', 2],
  ['runtime/util/', 3],
  ['runtime/config/', 3.1],
  ['runtime/events.ts', 3.2],
  ['runtime/context/', 3.2],
  ['runtime/history/', 3.2],
  // The RED object is built from the flows' node class; the rest of red-api/ is the contract below flows/.
  ['runtime/red-api/red-api.ts', 3.4],
  ['runtime/red-api/', 3.2],
  ['runtime/flows/', 3.3],
  ['runtime/deploy/', 3.4],
  ['runtime/cluster/', 3.5],
  ['runtime/multiplayer/', 3.5],
  ['runtime/runtime.ts', 3.6],
  ['runtime/api/', 3.7],
  ['nodes/', 4],
  ['server/', 5],
  ['cli.ts', 6],
  ['cli/', 6],
  ['runnel.ts', 6],
  ['start-summary.ts', 6],
  ['export/', 6],
  ['watchdog/', 6],
];
const LAYER_NAMES = new Map([
  [0, 'base'],
  [0.5, 'settings'],
  [1, 'storage'],
  [2, 'credentials/auth/registry/queues/projects'],
  [3, 'runtime util'],
  [3.1, 'runtime config'],
  [3.2, 'runtime contract, context, history, events'],
  [3.3, 'runtime flows'],
  [3.4, 'runtime deploy and RED object'],
  [3.5, 'runtime cluster'],
  [3.6, 'runtime facade'],
  [3.7, 'runtime admin API'],
  [4, 'nodes'],
  [5, 'server'],
  [6, 'cli/runnel'],
]);

const SRC = path.join(ROOT, 'src');
/** The declared RED API: the one runtime file core nodes may import, and only for types. */
const CONTRACT = 'runtime/red-api/red-api-types.ts';
/**
 * What the server may import of the runtime, only for types: the declared admin API, and the HTTP
 * contract (RED.httpNode/httpAdmin's route app) that the server's http-in router implements. The
 * runtime's objects reach the server only as the AdminApi the composition root (runnel.ts) builds.
 */
const SERVER_SEES = (target: string) => target.startsWith('runtime/api/') || target === 'runtime/red-api/http-types.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** `src/`-relative paths of the project files a file imports (statically, dynamically, or for types). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.relative(SRC, path.resolve(path.dirname(file), spec)).split(path.sep).join('/').replace(/\.js$/, '.ts'));
}

/**
 * `src/`-relative paths of the project files a file loads when it is loaded: static imports and
 * re-exports that TypeScript keeps (not `import type`, nor `{ type A }` lists with only types).
 */
function valueImportsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const specs: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const onlyTypes = clause !== undefined && (clause.isTypeOnly || (!clause.name && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly)));
      if (!onlyTypes) specs.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      specs.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return specs
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.relative(SRC, path.resolve(path.dirname(file), spec)).split(path.sep).join('/').replace(/\.js$/, '.ts'));
}

function layerOf(rel: string): number | undefined {
  return LAYERS.find(([prefix]) => (prefix.endsWith('/') ? rel.startsWith(prefix) : rel === prefix))?.[1];
}

const files = sourceFiles(SRC).map((f) => ({ rel: path.relative(SRC, f).split(path.sep).join('/'), imports: importsOf(f) }));

describe('source layering', () => {
  it('assigns every source file to a layer', () => {
    assert.deepEqual(files.filter((f) => layerOf(f.rel) === undefined).map((f) => f.rel), []);
  });

  it('has no import from a lower layer to a higher one', () => {
    const upward: string[] = [];
    for (const { rel, imports } of files) {
      const from = layerOf(rel)!;
      for (const target of imports) {
        const to = layerOf(target);
        if (to !== undefined && to > from) upward.push(`${rel} (${LAYER_NAMES.get(from)}) imports ${target} (${LAYER_NAMES.get(to)})`);
      }
    }
    assert.deepEqual(upward, []);
  });

  it('lets core nodes see the runtime only through the RED API contract, for types', () => {
    assert.deepEqual(runtimeImportsOutside('nodes', (target) => target === CONTRACT), []);
  });

  it('lets the server see the runtime only through the declared admin API and the HTTP contract, for types', () => {
    assert.deepEqual(runtimeImportsOutside('server', SERVER_SEES), []);
  });

  it('has no import cycle among the runtime files', () => {
    const graph = new Map(files.filter((f) => f.rel.startsWith('runtime/')).map((f) => [f.rel, f.imports.filter((i) => i.startsWith('runtime/'))]));
    assert.deepEqual(cycles(graph), []);
  });

  it('has no cycle of static value imports among all the source files', () => {
    assert.deepEqual(cycles(new Map(sourceFiles(SRC).map((f) => [path.relative(SRC, f).split(path.sep).join('/'), valueImportsOf(f)]))), []);
  });
});

/** The imports of runtime files by the files under `dir` that are not type-only imports of an `allowed` file. */
function runtimeImportsOutside(dir: string, allowed: (target: string) => boolean): string[] {
  const outside: string[] = [];
  for (const file of sourceFiles(path.join(SRC, dir))) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)) {
      const target = path.relative(SRC, path.resolve(path.dirname(file), m[2])).split(path.sep).join('/').replace(/\.js$/, '.ts');
      if (!target.startsWith('runtime/')) continue;
      if (!allowed(target) || !m[1]) outside.push(`${rel}: ${m[0].split('\n')[0]}`);
    }
  }
  return outside;
}

/** The strongly connected components with more than one file (Tarjan), each listed sorted. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
