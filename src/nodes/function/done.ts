import type * as Acorn from 'acorn';
import { lazy } from '../../base/lazy.js';

const acorn = lazy<typeof Acorn>('acorn');

/** Node-RED's cheap first test; only code that passes it is parsed. */
const MENTIONS_DONE = /node\.done\s*\(\s*\)/;

type AnyNode = { type: string } & Record<string, unknown>;

const isNode = (v: unknown): v is AnyNode => typeof v === 'object' && v !== null && typeof (v as AnyNode).type === 'string';

/**
 * Whether function-node code completes its own messages, decided as Node-RED decides it: the
 * text must contain `node.done()` and the parsed code must call `node.done` somewhere, so a
 * mention in a comment or a string leaves completion to the node. Code that does not parse
 * counts as not calling it (the node reports the syntax error and never runs).
 */
export function callsDone(func: string): boolean {
  if (!MENTIONS_DONE.test(func)) return false;
  let ast: AnyNode;
  try {
    ast = acorn().parse(func, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
    }) as unknown as AnyNode;
  } catch {
    return false;
  }
  const visit = (node: AnyNode): boolean => {
    if (node.type === 'CallExpression' && isDoneCall(node.callee)) return true;
    for (const key in node) {
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item) && visit(item)) return true;
      } else if (isNode(value) && visit(value)) {
        return true;
      }
    }
    return false;
  };
  return visit(ast);
}

function isDoneCall(callee: unknown): boolean {
  if (!isNode(callee) || callee.type !== 'MemberExpression') return false;
  const object = callee.object as AnyNode;
  const property = callee.property as AnyNode;
  return object.type === 'Identifier' && object.name === 'node' && property.type === 'Identifier' && property.name === 'done';
}
