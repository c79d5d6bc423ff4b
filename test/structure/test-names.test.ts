import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/process.js';

/**
 * Tests are named after what they protect: a name that cites an issue's numbering ("finding 3",
 * "issue 12", "item 7", "#4", "F12", "§8.1") says nothing once the issue is closed, and a failure
 * report should tell the reader what broke. Checked over every describe/it/test/suite name in
 * test/, test-ecosystem/ and bench/, and over the test files' names.
 */
const NUMBERED = /\b(?:findings?|issues?|items?)\s*#?\d|#\d|\bF\d+\b|§\s*\d/i;
const RUNNER_CALLS = new Set(['describe', 'it', 'test', 'suite']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    // Dot folders hold installed peers (bench/.peer5): other people's code, not our tests.
    if (e.isDirectory()) return e.name === 'fixtures' || e.name.startsWith('.') ? [] : tsFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** The literal text of every test and suite name in a file (a template's fixed parts). */
function testNames(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const names: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = ts.isPropertyAccessExpression(node.expression) ? node.expression.expression : node.expression;
      const [first] = node.arguments;
      if (ts.isIdentifier(callee) && RUNNER_CALLS.has(callee.text) && first) {
        if (ts.isStringLiteralLike(first)) names.push(first.text);
        else if (ts.isTemplateExpression(first)) names.push([first.head.text, ...first.templateSpans.map((s) => s.literal.text)].join(' '));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

function numberedNames(file: string, text: string): string[] {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  const named = testNames(file, text).filter((n) => NUMBERED.test(n));
  return [...(NUMBERED.test(path.basename(file)) ? [rel] : []), ...named.map((n) => `${rel}: ${n}`)];
}

describe('test names', () => {
  it('say what they protect, not which issue finding they came from', () => {
    const files = ['test', 'test-ecosystem', 'bench'].flatMap((d) => tsFiles(path.join(ROOT, d)));
    assert.deepEqual(files.flatMap((f) => numberedNames(f, readFileSync(f, 'utf8'))), []);
  });

  it('are read from string and template names, and only issue numbering is refused', () => {
    const file = path.join(ROOT, 'test', 'example.test.ts');
    const text = [
      "describe('finding 3: safe mode', () => {",
      "  it('issue 12 #4 x', () => {});",
      '  test(`F12 ${x} rounds`, () => {});',
      "  test.skip('§8.1 errors', () => {});",
      "  it('answers 404 for /nodes/x@1.0 and keeps 3 items', () => {});",
      '});',
    ].join('\n');
    assert.deepEqual(numberedNames(file, text), [
      'test/example.test.ts: finding 3: safe mode',
      'test/example.test.ts: issue 12 #4 x',
      'test/example.test.ts: F12   rounds',
      'test/example.test.ts: §8.1 errors',
    ]);
  });
});
