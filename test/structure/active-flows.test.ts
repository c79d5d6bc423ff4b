import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/process.js';

/**
 * The running configuration has one owner, as Node-RED's setFlows: only runtime/deploy/active-flows.ts
 * assigns the active configuration (RunState.active or a part of it) and names the runtime-deploy
 * notification, so no other part can change the flows behind its back or tell editors of a deploy
 * a second time.
 */
const SRC = path.join(ROOT, 'src');
const OWNER = 'runtime/deploy/active-flows.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken, ts.SyntaxKind.BarBarEqualsToken, ts.SyntaxKind.AmpersandAmpersandEqualsToken,
]);

/** `state.active` itself or any property below it, whatever the receiver of `state` is. */
const ACTIVE = /(^|\.)state\.active(\.|\[|$)/;

/** Where each file assigns the active configuration, and where it names runtime-deploy. */
function findings(): { assigns: string[]; names: string[] } {
  const assigns: string[] = [];
  const names: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const at = (node: ts.Node) => `${rel}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (ts.isBinaryExpression(node) && ASSIGNMENTS.has(node.operatorToken.kind) && ACTIVE.test(node.left.getText().replace(/\s+/g, ''))) assigns.push(at(node));
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && /(^|\/)runtime-deploy$/.test(node.text)) names.push(at(node));
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { assigns, names };
}

describe('the running configuration has one owner', () => {
  const { assigns, names } = findings();
  const outside = (list: string[]) => list.filter((where) => !where.startsWith(`${OWNER}:`));

  it(`only ${OWNER} assigns the active configuration`, () => {
    assert.ok(assigns.length > 0, `${OWNER} assigns it`);
    assert.deepEqual(outside(assigns), []);
  });

  it(`only ${OWNER} sends the runtime-deploy notification`, () => {
    assert.equal(names.length, 1, `named once: ${names.join(', ')}`);
    assert.deepEqual(outside(names), []);
  });
});
