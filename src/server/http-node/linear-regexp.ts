/**
 * Runs the regular expressions route patterns compile to in time linear in the path length.
 *
 * V8 backtracks, so patterns with several unbounded parts in one segment (`/*-*:a-:b`, which
 * Express 4 accepts) take polynomial time on hostile paths. Here the expression is compiled to a
 * small program and run by a backtracking interpreter that never retries an (instruction,
 * position) pair: without backreferences the outcome from such a pair does not depend on how it
 * was reached, so the first match found — and so every capture — is the one V8 finds, while the
 * work is bounded by program length × path length.
 *
 * The subset is what route patterns use: literals, `.`, classes, `\d\w\s`, groups (capturing,
 * named, non-capturing), alternation, greedy and lazy quantifiers, `^`, `$`, and lookaheads made
 * of literal alternatives (`(?!\/|-)`, `(?=\/|$)`). Anything else (backreferences, lookbehind,
 * `\b`, large counted repeats) is left to the native engine: compile returns undefined.
 */
export interface LinearRegExp {
  exec(input: string): RegExpExecArray | null;
}

type Pred = (c: string) => boolean;
type Node =
  | { t: 'char'; c: string; upper?: string }
  | { t: 'set'; p: Pred }
  | { t: 'seq'; items: Node[] }
  | { t: 'alt'; items: Node[] }
  | { t: 'group'; index: number; body: Node }
  | { t: 'repeat'; body: Node; min: number; max: number; lazy: boolean }
  | { t: 'look'; neg: boolean; alts: (Pred[] | null)[] }
  | { t: 'bol' }
  | { t: 'eol' };

type Inst =
  | { op: 'char'; c: string; upper?: string }
  | { op: 'set'; p: Pred }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'save'; slot: number }
  | { op: 'look'; neg: boolean; alts: (Pred[] | null)[] }
  | { op: 'bol' }
  | { op: 'eol' }
  | { op: 'match' };

class Unsupported extends Error {}
const MAX_COUNTED = 50;
const LINE_END = new Set(['\n', '\r', '\u2028', '\u2029']);
const DIGIT: Pred = (c) => c >= '0' && c <= '9';
const WORD: Pred = (c) => DIGIT(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const SPACE: Pred = (c) => /\s/.test(c);
const ESCAPE_SETS: Record<string, Pred> = { d: DIGIT, w: WORD, s: SPACE, D: (c) => !DIGIT(c), W: (c) => !WORD(c), S: (c) => !SPACE(c) };
const CONTROL: Record<string, string> = { n: '\n', r: '\r', t: '\t', f: '\f', v: '\v', '0': '\0' };

class Parser {
  private i = 0;
  captures = 0;
  constructor(private readonly src: string, readonly fold: boolean) {}

  parse(): Node {
    const node = this.alternation();
    if (this.i < this.src.length) throw new Unsupported('unbalanced )');
    return node;
  }

  private alternation(): Node {
    const items = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      items.push(this.sequence());
    }
    return items.length === 1 ? items[0] : { t: 'alt', items };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') items.push(this.quantified(this.atom()));
    return { t: 'seq', items };
  }

  private quantified(atom: Node): Node {
    const s = this.src;
    let min: number;
    let max: number;
    const c = s[this.i];
    if (c === '*' || c === '+' || c === '?') {
      this.i++;
      [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(this.i));
      if (!m) return atom;
      this.i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > MAX_COUNTED || (max !== Infinity && max > MAX_COUNTED)) throw new Unsupported('large counted repeat');
    } else {
      return atom;
    }
    const lazy = s[this.i] === '?';
    if (lazy) this.i++;
    if (atom.t === 'look' || atom.t === 'bol' || atom.t === 'eol') throw new Unsupported('quantified assertion');
    return { t: 'repeat', body: atom, min, max, lazy };
  }

  private atom(): Node {
    const s = this.src;
    const c = s[this.i++];
    if (c === '.') return { t: 'set', p: (x) => !LINE_END.has(x) };
    if (c === '^') return { t: 'bol' };
    if (c === '$') return { t: 'eol' };
    if (c === '[') return this.charClass();
    if (c === '\\') return this.escape(false) as Node;
    if (c === '(') return this.group();
    if (c === '*' || c === '+' || c === '?' || c === '{' || c === '}' || c === ']') {
      if (c === '{' || c === '}' || c === ']') return this.literal(c);
      throw new Unsupported('nothing to repeat');
    }
    return this.literal(c);
  }

  private literal(c: string): Node {
    // The i flag compares characters by their upper case (ES Canonicalize), one code unit each.
    const upper = c.toUpperCase();
    return this.fold && upper !== c.toLowerCase() && upper.length === 1 ? { t: 'char', c, upper } : { t: 'char', c };
  }

  /** An escape outside (inClass false) or inside a class; inside, returns a predicate or a character. */
  private escape(inClass: boolean): Node | Pred | string {
    const c = this.src[this.i++];
    if (c === undefined) throw new Unsupported('trailing backslash');
    if (ESCAPE_SETS[c]) return inClass ? ESCAPE_SETS[c] : { t: 'set', p: ESCAPE_SETS[c] };
    if (/[1-9bBkpPuxc]/.test(c)) throw new Unsupported(`\\${c}`);
    const ch = CONTROL[c] ?? c;
    return inClass ? ch : this.literal(ch);
  }

  private charClass(): Node {
    const s = this.src;
    let negated = false;
    if (s[this.i] === '^') {
      negated = true;
      this.i++;
    }
    const preds: Pred[] = [];
    while (this.i < s.length && s[this.i] !== ']') {
      let lo: string | Pred = s[this.i++];
      if (lo === '\\') lo = this.escape(true) as string | Pred;
      if (typeof lo === 'string' && s[this.i] === '-' && s[this.i + 1] !== ']' && this.i + 1 < s.length) {
        this.i++;
        let hi: string | Pred = s[this.i++];
        if (hi === '\\') hi = this.escape(true) as string | Pred;
        if (typeof hi !== 'string') throw new Unsupported('class range to a set');
        const [a, b] = [lo, hi];
        if (a > b) throw new Unsupported('range out of order');
        preds.push((x) => x >= a && x <= b);
        continue;
      }
      if (typeof lo === 'string') {
        const ch = lo;
        preds.push((x) => x === ch);
      } else {
        preds.push(lo);
      }
    }
    if (s[this.i] !== ']') throw new Unsupported('unterminated class');
    this.i++;
    const fold = this.fold;
    const inSet = (x: string) => preds.some((p) => p(x));
    const test = fold ? (x: string) => inSet(x) || inSet(x.toLowerCase()) || inSet(x.toUpperCase()) : inSet;
    return { t: 'set', p: negated ? (x) => !test(x) : test };
  }

  private group(): Node {
    const s = this.src;
    let index = -1;
    if (s[this.i] === '?') {
      const kind = s[this.i + 1];
      if (kind === ':') this.i += 2;
      else if (kind === '=' || kind === '!') {
        this.i += 2;
        return this.lookahead(kind === '!');
      } else if (kind === '<' && s[this.i + 2] !== '=' && s[this.i + 2] !== '!') {
        const end = s.indexOf('>', this.i);
        if (end === -1) throw new Unsupported('bad group name');
        this.i = end + 1;
        index = ++this.captures;
      } else throw new Unsupported('group kind');
    } else {
      index = ++this.captures;
    }
    const body = this.alternation();
    if (s[this.i++] !== ')') throw new Unsupported('unterminated group');
    return { t: 'group', index, body };
  }

  /** Only alternatives of single characters (literal or sets) or `$`: enough for path-to-regexp's lookaheads. */
  private lookahead(neg: boolean): Node {
    const start = this.i;
    const body = this.alternation();
    if (this.src[this.i++] !== ')') throw new Unsupported('unterminated lookahead');
    const alts = (body.t === 'alt' ? body.items : [body]).map((alt) => {
      const items = alt.t === 'seq' ? alt.items : [alt];
      if (items.length === 1 && items[0].t === 'eol') return null;
      return items.map((n): Pred => {
        if (n.t === 'set') return n.p;
        if (n.t !== 'char') throw new Unsupported(`lookahead ${this.src.slice(start, this.i)}`);
        const { c, upper } = n;
        return upper === undefined ? (x) => x === c : (x) => x === c || x.toUpperCase() === upper;
      });
    });
    return { t: 'look', neg, alts };
  }
}

function emit(node: Node, prog: Inst[], fold: boolean): void {
  switch (node.t) {
    case 'char':
      prog.push({ op: 'char', c: node.c, upper: node.upper });
      return;
    case 'set':
      prog.push({ op: 'set', p: node.p });
      return;
    case 'seq':
      for (const item of node.items) emit(item, prog, fold);
      return;
    case 'alt': {
      const jumps: { op: 'jmp'; x: number }[] = [];
      node.items.forEach((item, k) => {
        if (k < node.items.length - 1) {
          const split = { op: 'split' as const, x: prog.length + 1, y: -1 };
          prog.push(split);
          emit(item, prog, fold);
          const jmp = { op: 'jmp' as const, x: -1 };
          jumps.push(jmp);
          prog.push(jmp);
          split.y = prog.length;
        } else {
          emit(item, prog, fold);
        }
      });
      for (const j of jumps) j.x = prog.length;
      return;
    }
    case 'group':
      if (node.index < 0) return emit(node.body, prog, fold);
      prog.push({ op: 'save', slot: node.index * 2 });
      emit(node.body, prog, fold);
      prog.push({ op: 'save', slot: node.index * 2 + 1 });
      return;
    case 'repeat': {
      for (let k = 0; k < node.min; k++) emit(node.body, prog, fold);
      if (node.max === Infinity) {
        const split = { op: 'split' as const, x: -1, y: -1 };
        const loop = prog.length;
        prog.push(split);
        emit(node.body, prog, fold);
        prog.push({ op: 'jmp', x: loop });
        const [body, exit] = [loop + 1, prog.length];
        [split.x, split.y] = node.lazy ? [exit, body] : [body, exit];
        return;
      }
      const splits: { op: 'split'; x: number; y: number }[] = [];
      for (let k = node.min; k < node.max; k++) {
        const split = { op: 'split' as const, x: prog.length + 1, y: -1 };
        splits.push(split);
        prog.push(split);
        emit(node.body, prog, fold);
      }
      for (const split of splits) {
        split.y = prog.length;
        if (node.lazy) [split.x, split.y] = [split.y, split.x];
      }
      return;
    }
    case 'look':
      prog.push({ op: 'look', neg: node.neg, alts: node.alts });
      return;
    case 'bol':
      prog.push({ op: 'bol' });
      return;
    case 'eol':
      prog.push({ op: 'eol' });
  }
}

function run(prog: Inst[], slots: number, input: string): RegExpExecArray | null {
  const n = input.length;
  const width = n + 1;
  const seen = new Uint8Array(prog.length * width);
  const caps = new Int32Array(slots).fill(-1);
  caps[0] = 0;
  // Entries: [pc, pos] to try, or [-1 - slot, old value] to restore on the way back.
  const stack: number[] = [0, 0];
  while (stack.length > 0) {
    const b = stack.pop() as number;
    const a = stack.pop() as number;
    if (a < 0) {
      caps[-1 - a] = b;
      continue;
    }
    let pc = a;
    let pos = b;
    for (;;) {
      const key = pc * width + pos;
      if (seen[key] === 1) break;
      seen[key] = 1;
      const inst = prog[pc];
      if (inst.op === 'char') {
        if (pos < n && (input[pos] === inst.c || (inst.upper !== undefined && input[pos].toUpperCase() === inst.upper))) {
          pc++;
          pos++;
          continue;
        }
        break;
      }
      if (inst.op === 'set') {
        if (pos < n && inst.p(input[pos])) {
          pc++;
          pos++;
          continue;
        }
        break;
      }
      if (inst.op === 'split') {
        stack.push(inst.y, pos);
        pc = inst.x;
        continue;
      }
      if (inst.op === 'jmp') {
        pc = inst.x;
        continue;
      }
      if (inst.op === 'save') {
        stack.push(-1 - inst.slot, caps[inst.slot]);
        caps[inst.slot] = pos;
        pc++;
        continue;
      }
      if (inst.op === 'look') {
        const hit = inst.alts.some((alt) => (alt === null ? pos === n : pos + alt.length <= n && alt.every((p, k) => p(input[pos + k]))));
        if (hit === inst.neg) break;
        pc++;
        continue;
      }
      if (inst.op === 'bol') {
        if (pos !== 0) break;
        pc++;
        continue;
      }
      if (inst.op === 'eol') {
        if (pos !== n) break;
        pc++;
        continue;
      }
      caps[1] = pos;
      const out = [] as unknown as RegExpExecArray;
      for (let k = 0; k < slots; k += 2) out.push(caps[k] < 0 || caps[k + 1] < 0 ? (undefined as unknown as string) : input.slice(caps[k], caps[k + 1]));
      out.index = 0;
      out.input = input;
      return out;
    }
  }
  return null;
}

/** Whether a node can consume a `/`; a negative lookahead on `/` before it rules that out. */
function consumesSlash(node: Node): boolean {
  switch (node.t) {
    case 'char':
      return node.c === '/';
    case 'set':
      return node.p('/');
    case 'seq':
      for (const item of node.items) {
        if (item.t === 'look' && item.neg && item.alts.some((alt) => alt !== null && alt.length === 1 && alt[0]('/'))) return false;
        if (consumesSlash(item)) return true;
      }
      return false;
    case 'alt':
      return node.items.some(consumesSlash);
    case 'group':
    case 'repeat':
      return consumesSlash(node.body);
    default:
      return false;
  }
}

function unbounded(node: Node, out: Node[]): Node[] {
  if (node.t === 'repeat' && node.max === Infinity) out.push(node);
  if (node.t === 'seq' || node.t === 'alt') for (const item of node.items) unbounded(item, out);
  if (node.t === 'group' || node.t === 'repeat') unbounded(node.body, out);
  return out;
}

/**
 * Whether V8's backtracking is already linear for this tree: at most one unbounded repeat in all,
 * or none that can cross a `/` and at most one between consecutive mandatory `/` characters (a
 * repeat confined to one segment ends at that segment's end, so later segments never multiply
 * its choices). This keeps the common routes (`/hello`, `/api/:id/items/:item`) on the native engine.
 */
function backtrackSafe(tree: Node): boolean {
  const all = unbounded(tree, []);
  if (all.length <= 1) return true;
  if (all.some((r) => consumesSlash((r as { body: Node }).body))) return false;
  const items = tree.t === 'seq' ? tree.items : [tree];
  let inPiece = 0;
  for (const item of items) {
    if (item.t === 'char' && item.c === '/') {
      inPiece = 0;
      continue;
    }
    inPiece += unbounded(item, []).length;
    if (inPiece > 1) return false;
  }
  return true;
}

/**
 * A matcher for an anchored (`^`-led) route expression that is linear in the input: the native
 * RegExp when its backtracking is provably bounded, else the interpreter above. Undefined when
 * the expression is neither (it uses more than the subset): the caller keeps the native engine.
 */
export function compileLinear(regexp: RegExp): LinearRegExp | undefined {
  if (!regexp.source.startsWith('^') || /[gmsuyvd]/.test(regexp.flags)) return undefined;
  let tree: Node;
  let parser: Parser;
  try {
    parser = new Parser(regexp.source, regexp.flags.includes('i'));
    tree = parser.parse();
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
  if (backtrackSafe(tree)) return regexp as LinearRegExp;
  const prog: Inst[] = [];
  emit(tree, prog, parser.fold);
  prog.push({ op: 'match' });
  const slots = (parser.captures + 1) * 2;
  return { exec: (input) => run(prog, slots, input) };
}
