/**
 * Bounds runaway function-node code without a per-call cost. A vm `timeout` starts a watchdog per
 * call (about 130 µs against 35 ns for the call itself); instead the user code is instrumented:
 * every loop body and every function body starts with `if (++G.n > 1000) G.check();`, where `G` is
 * the node's Guard. Any endless run either loops in one frame or makes endless calls, so it passes
 * one of these counters, and `check()` throws once the run is over its time limit.
 *
 * A run lasts until the event loop gets a turn: the first `check()` arms the deadline (limit ms
 * from then) and queues a setImmediate that disarms it. An `await` or a promise callback does not
 * end the run, so `while (true) { await null }` and a self-feeding promise chain — which starve
 * the event loop through the microtask queue exactly as a synchronous loop does — are stopped
 * like one. Code that really waits (I/O, timers) lets the loop turn and starts afresh. Timing is
 * lazy so that a call that never reaches 1000 checks pays no clock read. The node calls `enter()`
 * before each call it makes itself, so back-to-back messages in one delivery batch get one limit
 * each (deliveries are macrotasks, so they never interleave with a runaway microtask chain).
 *
 * Once over time, a run stays over time until it ends: every later check throws too, so code that
 * catches the error and loops on is stopped at its next check outside the `try`.
 *
 * User code cannot name the guard (its variable has a random suffix, see sandbox.ts), so
 * assigning look-alike names does nothing. Code that reads its own source back can learn the name
 * and reset the counter; like node:vm itself, the guard stops mistakes, not deliberate escapes.
 * Code built at run time (`eval`, `Function` and the other function constructors of the node's
 * context) goes through `instrumentCode` before it is compiled (see runtime-code.ts).
 *
 * Not covered: time spent inside one host call (sorting or parsing a huge input, library code, a
 * regular expression with backreferences — see sandbox.ts for the others). Instrumenting inserts
 * text at source positions and never regenerates code, and inserts no line breaks, so line
 * numbers in user stack traces are unchanged.
 */
import type * as Acorn from 'acorn';
import type { Node as AstNode } from 'acorn';
import { lazy } from '../../base/lazy.js';

const acorn = lazy<typeof Acorn>('acorn');
import { performance } from 'node:perf_hooks';

/** Checks between clock reads: a clock read costs about as much as 1000 bare loop iterations. */
const CHECK_EVERY = 1000;

/**
 * A time limit and what sets it: the error names the setting, so a user whose honest code needs
 * longer knows what to raise (`raise` completes "raise …").
 */
export interface TimeLimit {
  ms: number;
  raise: string;
}

export class Guard {
  /** Incremented by the instrumented code; public because that code reads it directly. */
  n = 0;
  private deadline = 0;
  private disarmQueued = false;
  private readonly limit: TimeLimit;
  private readonly label: string;
  private readonly disarm = () => {
    this.deadline = 0;
    this.disarmQueued = false;
  };

  constructor(limit: TimeLimit, label: string) {
    this.limit = limit;
    this.label = label;
  }

  /** Starts a synchronous run made by the node itself (message, timer, initialize, finalize). */
  enter(): void {
    this.n = 0;
    this.deadline = 0;
  }

  check(): void {
    this.n = 0;
    const now = performance.now();
    if (this.deadline === 0) {
      this.deadline = now + this.limit.ms;
      if (!this.disarmQueued) {
        this.disarmQueued = true;
        setImmediate(this.disarm);
      }
    } else if (now > this.deadline) {
      throw new RangeError(`Function node ${this.label} ran longer than ${this.limit.ms} ms: raise ${this.limit.raise} if its work needs longer`);
    }
  }
}

type AnyNode = AstNode & Record<string, unknown>;

const LOOPS = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

interface Insertion {
  pos: number;
  text: string;
  /** Closing braces go before opening text at the same position. */
  opens: boolean;
}

/**
 * Returns `source` with checks inserted, parsed as it is compiled: `(${prefix}${source}${suffix})`
 * where prefix and suffix wrap the source in a function (whose own start gets no check: the node
 * calls `enter()` before calling it). Throws acorn's SyntaxError for code it cannot parse.
 */
export function instrument(source: string, prefix: string, suffix: string, guardName: string): string {
  const text = `(${prefix}${source}${suffix})`;
  // Nothing is inserted into the prefix or the suffix, so they come off unchanged.
  const result = insertChecks(text, guardName, 1);
  return result.slice(prefix.length + 1, result.length - suffix.length - 1);
}

/** Returns a whole script (`eval`'s argument, a built function's text) with checks everywhere. */
export function instrumentCode(text: string, guardName: string): string {
  return insertChecks(text, guardName, -1);
}

/** The text with every check in place; the function starting at `skip` gets none at its start. */
function insertChecks(text: string, guardName: string, skip: number): string {
  const ast = acorn().parse(text, { ecmaVersion: 'latest', sourceType: 'script', preserveParens: true }) as unknown as AnyNode;
  const check = `if(++${guardName}.n>${CHECK_EVERY})${guardName}.check();`;
  const out: Insertion[] = [];
  const visit = (node: AnyNode): void => {
    if (LOOPS.has(node.type)) guardStatement(node.body as AnyNode, check, out);
    else if (FUNCTIONS.has(node.type) && node.start !== skip) guardFunction(node, check, out);
    for (const key in node) {
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item);
      } else if (isNode(value)) {
        visit(value);
      }
    }
  };
  visit(ast);
  out.sort((a, b) => a.pos - b.pos || Number(a.opens) - Number(b.opens));
  let result = '';
  let at = 0;
  for (const { pos, text: piece } of out) {
    result += text.slice(at, pos) + piece;
    at = pos;
  }
  return result + text.slice(at);
}

function isNode(value: unknown): value is AnyNode {
  return typeof value === 'object' && value !== null && typeof (value as AnyNode).type === 'string';
}

/** A loop body gets the check first; a body without braces is wrapped in a block to hold it. */
function guardStatement(body: AnyNode, check: string, out: Insertion[]): void {
  if (body.type === 'BlockStatement') {
    out.push({ pos: body.start + 1, text: check, opens: true });
  } else {
    out.push({ pos: body.start, text: `{${check}`, opens: true });
    out.push({ pos: body.end, text: '}', opens: false });
  }
}

/** The check goes after any directive prologue ("use strict" must stay first to count). */
function guardFunction(fn: AnyNode, check: string, out: Insertion[]): void {
  const body = fn.body as AnyNode;
  if (body.type !== 'BlockStatement') {
    out.push({ pos: body.start, text: `{${check}return `, opens: true });
    out.push({ pos: body.end, text: '}', opens: false });
    return;
  }
  const statements = body.body as AnyNode[];
  let last: AnyNode | null = null;
  for (const s of statements) {
    if (s.type !== 'ExpressionStatement' || typeof s.directive !== 'string') break;
    last = s;
  }
  // After a directive without its semicolon, `;` keeps the check from joining its line.
  out.push(last ? { pos: last.end, text: `;${check}`, opens: true } : { pos: body.start + 1, text: check, opens: true });
}
