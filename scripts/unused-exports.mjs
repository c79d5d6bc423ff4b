#!/usr/bin/env node
// Lists the exports of src/ that no other file of the program (src/, test/, bench/,
// test-ecosystem/: tsconfig.json's files) refers to, and exits 1 when there are any: an export
// nobody imports is dead code, or a name that should not be exported. It asks TypeScript's checker
// what each identifier of every file means, so named, namespace (`import * as m`, `m.name`) and
// dynamic (`(await import('./m.js')).name`) imports, re-exports and `import('./m.js').Type`
// all count. Usage: node scripts/unused-exports.mjs [project dir, default: this repository].
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Exports kept though nothing here imports them, each with its reason: they are a contract with
 * code outside this repository.
 */
const CONTRACTS = new Map([
  // bin/runnel.js (plain JavaScript, outside the program) starts the command line through it.
  ['src/cli.ts', ['main']],
  // bin/node-red.js, the same for Node-RED's command line.
  ['src/cli/node-red.ts', ['nodeRedMain']],
]);

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const configPath = path.join(root, 'tsconfig.json');
const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  },
});
const program = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, noEmit: true, incremental: false } });
const checker = program.getTypeChecker();
const srcDir = path.join(root, 'src') + path.sep;
const relative = (file) => path.relative(root, file).split(path.sep).join('/');

/** The symbol an alias (import, re-export) finally stands for. */
function target(symbol) {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** Every export of each src/ file, as the symbol it stands for → `file: name`. */
const exported = new Map();
for (const file of program.getSourceFiles()) {
  if (file.isDeclarationFile || !path.resolve(file.fileName).startsWith(srcDir)) continue;
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (!moduleSymbol) continue;
  const name = relative(file.fileName);
  const kept = CONTRACTS.get(name) ?? [];
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    if (kept.includes(symbol.name)) continue;
    const declared = target(symbol);
    // A re-export of another file's name is used wherever that name is.
    if (!declared.declarations?.some((d) => d.getSourceFile() === file)) continue;
    exported.set(declared, `${name}: ${symbol.name}`);
  }
}

/** Whether `node` names `symbol` where it is declared, rather than referring to it. */
const declares = (symbol, node) => symbol.declarations?.some((d) => d.name === node) ?? false;
/** Types and interfaces are the named shapes of their file's API: their own file's use keeps them. */
const isTypeOnly = (symbol) => (symbol.flags & ts.SymbolFlags.Value) === 0;

/** Removes from `exported` what another file, or for a type its own file, refers to. */
function visit(node, file) {
  if (ts.isIdentifier(node)) {
    const symbols = [checker.getSymbolAtLocation(node)];
    if (ts.isShorthandPropertyAssignment(node.parent)) symbols.push(checker.getShorthandAssignmentValueSymbol(node.parent));
    for (const symbol of symbols) {
      if (!symbol) continue;
      const declared = target(symbol);
      if (!exported.has(declared) || declares(declared, node)) continue;
      const elsewhere = declared.declarations?.some((d) => d.getSourceFile() !== file) ?? false;
      if (elsewhere || isTypeOnly(declared)) exported.delete(declared);
    }
  }
  ts.forEachChild(node, (child) => visit(child, file));
}
for (const file of program.getSourceFiles()) {
  if (!file.isDeclarationFile) visit(file, file);
}

const unused = [...exported.values()].sort();
if (unused.length > 0) {
  process.stderr.write(`Exports nothing else imports (remove them, or drop the export):\n${unused.map((u) => `  ${u}\n`).join('')}`);
  process.exit(1);
}
