/**
 * The switch node. Rules are compiled at construction (constant values evaluated, regular
 * expressions and JSONata prepared) and run synchronously unless a JSONata expression is
 * involved; then messages go through a per-node promise chain so their order is kept.
 *
 * When a rule needs a group's size (`tail`) or `repair` is set, messages carrying msg.parts are
 * held until their whole group has arrived; `repair` then gives each output's share of the group
 * its own msg.parts (new id, index and count), as Node-RED does.
 */
import { bufferLimit } from './lib/seq-limit.js';
import { evaluateJSONata } from './lib/jsonata.js';
import type { DoneFn, Msg, NodeConfig, NodeInstance, PreparedJSONata, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

/** A rule operand: a constant, the previous property value, or something read per message. */
interface Operand {
  kind: 'const' | 'prev' | 'dynamic' | 'jsonata';
  value: unknown;
  type: string;
  exp: PreparedJSONata | null;
}

interface Parts {
  id: string;
  index: number;
  count?: number;
}

/** A message group being held until its size is known and every member has arrived. */
interface Group {
  count: number | undefined;
  msgs: Msg[];
}

interface Rule {
  t: string;
  v: Operand;
  v2: Operand;
  ignoreCase: boolean;
  /** The compiled pattern of a regex rule with a constant value. */
  re: RegExp | null;
}

type Op = (a: any, b: any, c: any, rule: Rule, parts: Parts) => boolean;

const size = (a: unknown): number | undefined => {
  if (typeof a === 'string' || Array.isArray(a) || Buffer.isBuffer(a)) return a.length;
  if (typeof a === 'object' && a !== null) return Object.keys(a).length;
  return undefined;
};

/** Node-RED's operators, loose comparisons included. */
const OPERATORS: Record<string, Op> = {
  eq: (a, b) => a == b,
  neq: (a, b) => a != b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  btwn: (a, b, c) => (a >= b && a <= c) || (a <= b && a >= c),
  cont: (a, b) => String(a).indexOf(b) !== -1,
  regex: (a, b, _c, rule) => (rule.re ?? new RegExp(b, rule.ignoreCase ? 'i' : '')).test(String(a)),
  true: (a) => a === true,
  false: (a) => a === false,
  null: (a) => a === undefined || a === null,
  nnull: (a) => a !== undefined && a !== null,
  empty: (a) => size(a) === 0,
  nempty: (a) => {
    const n = size(a);
    return n !== undefined && n !== 0;
  },
  istype: (a, b) => {
    if (b === 'array') return Array.isArray(a);
    if (b === 'buffer') return Buffer.isBuffer(a);
    if (b === 'json') {
      try {
        JSON.parse(a);
        return true;
      } catch {
        return false;
      }
    }
    if (b === 'null') return a === null;
    return typeof a === b && !Array.isArray(a) && !Buffer.isBuffer(a) && a !== null;
  },
  head: (_a, b, _c, _r, parts) => parts.index < Number(b),
  tail: (_a, b, _c, _r, parts) => (parts.count as number) - Number(b) <= parts.index,
  index: (_a, b, c, _r, parts) => Number(b) <= parts.index && parts.index <= Number(c),
  hask: (a, b) => a !== undefined && a !== null && typeof b !== 'object' && Object.prototype.hasOwnProperty.call(a, String(b)),
  jsonata_exp: (_a, b) => b === true,
  else: (a) => a === true,
};

/** Types whose value depends on the message or the moment. */
const DYNAMIC = new Set(['msg', 'flow', 'global', 'date']);

const invalidExpression = (err: unknown) => `Invalid JSONata expression: ${(err as Error).message}`;

const hasParts = (msg: Msg) =>
  typeof msg.parts === 'object' && msg.parts !== null && 'id' in msg.parts && 'index' in msg.parts;

export default function (RED: RedApi) {
  function operand(node: NodeInstance, value: unknown, type: string | undefined, present: boolean): Operand {
    if (!present) return { kind: 'const', value: undefined, type: '', exp: null };
    const vt = type || (!Number.isNaN(Number(value)) ? 'num' : 'str');
    if (vt === 'prev') return { kind: 'prev', value: undefined, type: vt, exp: null };
    if (vt === 'jsonata') return { kind: 'jsonata', value, type: vt, exp: RED.util.prepareJSONataExpression(String(value), node) };
    if (DYNAMIC.has(vt)) return { kind: 'dynamic', value, type: vt, exp: null };
    // Node-RED hands istype rules the literal type names "json" and "null".
    if (vt === 'json' || vt === 'null') return { kind: 'const', value: vt, type: vt, exp: null };
    let v: unknown;
    try {
      v = RED.util.evaluateNodeProperty(value, vt, node, null);
    } catch {
      v = undefined;
    }
    return { kind: 'const', value: v, type: vt, exp: null };
  }

  /** Rejects with Node-RED's wording as a plain string, which catch nodes show as is. */
  const evaluate = (exp: PreparedJSONata, msg: Msg) => evaluateJSONata(RED.util, exp, msg).catch((err: unknown) => Promise.reject(invalidExpression(err)));

  class SwitchNode extends RED.nodes.Node {
    property: string;
    propertyType: string;
    checkall: string;
    previousValue: unknown = null;
    private readonly rules: Rule[] = [];
    private readonly propertyExp: PreparedJSONata | null = null;
    private readonly async: boolean = false;
    private chain: Promise<void> = Promise.resolve();
    private readonly repair: boolean;
    /** Whether messages with msg.parts are held per group (a `tail` rule or `repair`). */
    private readonly grouped: boolean = false;
    private readonly maxKept: number;
    private groups = new Map<string, Group>();
    private kept = 0;

    constructor(config: NodeConfig) {
      super(config);
      this.property = String(config.property ?? '');
      this.propertyType = typeof config.propertyType === 'string' && config.propertyType ? config.propertyType : 'msg';
      this.checkall = String(config.checkall || 'true');
      this.repair = config.repair === true || config.repair === 'true';
      this.maxKept = bufferLimit(RED.settings as Record<string, unknown>);
      try {
        if (this.propertyType === 'jsonata') this.propertyExp = RED.util.prepareJSONataExpression(this.property, this);
        for (const raw of Array.isArray(config.rules) ? (config.rules as Record<string, unknown>[]) : []) this.rules.push(this.compile(raw));
      } catch (err) {
        // As in Node-RED, an invalid expression leaves the node inert.
        this.error(invalidExpression(err));
        return;
      }
      this.async = this.propertyExp !== null || this.rules.some((r) => r.v.exp || r.v2.exp);
      this.grouped = this.repair || this.rules.some((r) => r.t === 'tail');
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        if (this.grouped && hasParts(msg)) {
          this.chain = this.chain.then(() => this.hold(msg, send, done));
          return;
        }
        if (!this.async) return this.route(msg, send, done);
        this.chain = this.chain.then(() => this.routeAsync(msg, send, done));
      });
      this.on('close', () => {
        this.groups = new Map();
        this.kept = 0;
      });
    }

    /** Holds a group member; the member completing the group releases them all, in order. */
    private async hold(msg: Msg, send: SendFn, done: DoneFn): Promise<void> {
      const parts = msg.parts as Parts;
      let group = this.groups.get(parts.id);
      if (!group) this.groups.set(parts.id, (group = { count: undefined, msgs: [] }));
      group.msgs.push(msg);
      if (parts.count !== undefined) group.count = parts.count;
      if (this.maxKept > 0 && ++this.kept > this.maxKept) {
        this.groups = new Map();
        this.kept = 0;
        done('too many pending messages in switch node');
        return;
      }
      if (group.count !== group.msgs.length) {
        done();
        return;
      }
      this.groups.delete(parts.id);
      this.kept = Math.max(0, this.kept - group.msgs.length);
      const rows: (Msg | null)[][] = [];
      for (const member of group.msgs) {
        (member.parts as Parts).count = group.count;
        const onward = await this.decideOne(member);
        if (!onward) continue;
        if (this.repair) rows.push(onward);
        else send(onward);
      }
      if (rows.length) this.sendRepaired(rows, send);
      done();
    }

    /** The outputs for one message, or null when it was dropped (its error already reported). */
    private async decideOne(msg: Msg): Promise<(Msg | null)[] | null> {
      let onward: (Msg | null)[] | null = null;
      const keep: SendFn = (out) => {
        onward = out as (Msg | null)[];
      };
      const report: DoneFn = (err) => {
        if (err) this.error(err, msg);
      };
      if (this.async) await this.routeAsync(msg, keep, report);
      else this.route(msg, keep, report);
      return onward;
    }

    /** Each output's messages become a sequence of their own, numbered from 0. */
    private sendRepaired(rows: (Msg | null)[][], send: SendFn): void {
      const ports = rows[0].length;
      const counts = new Array<number>(ports).fill(0);
      for (const row of rows) for (let j = 0; j < ports; j++) if (row[j]) counts[j]++;
      const ids = Array.from({ length: ports }, () => RED.util.generateId());
      const indexes = new Array<number>(ports).fill(0);
      for (const row of rows) {
        send(row.map((m, j) => {
          if (!m) return null;
          const copy: Msg = RED.util.cloneMessage(m);
          Object.assign(copy.parts, { id: ids[j], index: indexes[j]++, count: counts[j] });
          return copy;
        }));
      }
    }

    private compile(raw: Record<string, unknown>): Rule {
      const t = String(raw.t);
      const v = operand(this, raw.v, raw.vt as string | undefined, true);
      const v2 = operand(this, raw.v2, raw.v2t as string | undefined, raw.v2 !== undefined);
      const ignoreCase = raw.case === true || raw.case === 'true';
      let re: RegExp | null = null;
      if (t === 'regex' && v.kind === 'const') {
        try {
          re = new RegExp(v.value as string, ignoreCase ? 'i' : '');
        } catch (err) {
          // Reported now (the node cannot work as configured) and, as in Node-RED, per message.
          this.error(`Invalid regular expression: ${(err as Error).message}`);
        }
      }
      return { t, v, v2, ignoreCase, re };
    }

    private read(o: Operand, msg: Msg): unknown {
      if (o.kind === 'const') return o.value;
      if (o.kind === 'prev') return this.previousValue;
      try {
        return RED.util.evaluateNodeProperty(o.value, o.type, this, msg);
      } catch {
        return undefined;
      }
    }

    private subjectOf(msg: Msg): unknown {
      try {
        return RED.util.evaluateNodeProperty(this.property, this.propertyType, this, msg);
      } catch {
        return undefined;
      }
    }

    /** The output array; operands come from `values` (async path) or are read here. Throws what a rule throws. */
    private decide(msg: Msg, property: unknown, values: [unknown, unknown][] | null): (Msg | null)[] {
      const onward: (Msg | null)[] = [];
      let elseflag = true;
      const parts = msg.parts as Parts;
      for (let i = 0; i < this.rules.length; i++) {
        const rule = this.rules[i];
        const v1 = values ? values[i][0] : this.read(rule.v, msg);
        const v2 = values ? values[i][1] : this.read(rule.v2, msg);
        let subject = property;
        if (rule.t === 'else') {
          subject = elseflag;
          elseflag = true;
        }
        if (OPERATORS[rule.t](subject, v1, v2, rule, parts)) {
          onward.push(msg);
          elseflag = false;
          if (this.checkall === 'false') break;
        } else {
          onward.push(null);
        }
      }
      this.previousValue = property;
      return onward;
    }

    private route(msg: Msg, send: SendFn, done: DoneFn): void {
      const property = this.subjectOf(msg);
      let onward: (Msg | null)[];
      try {
        onward = this.decide(msg, property, null);
      } catch (err) {
        done(err);
        return;
      }
      send(onward);
      done();
    }

    private async routeAsync(msg: Msg, send: SendFn, done: DoneFn): Promise<void> {
      let property: unknown;
      try {
        property = this.propertyExp ? await evaluate(this.propertyExp, msg) : this.subjectOf(msg);
      } catch (err) {
        // Node-RED only warns when the property expression fails, so catch nodes never see it.
        this.warn(err);
        done();
        return;
      }
      try {
        const values: [unknown, unknown][] = [];
        for (const rule of this.rules) {
          if (rule.t === 'jsonata_exp' && rule.v.exp && hasParts(msg)) {
            rule.v.exp.assign('I', msg.parts.index);
            rule.v.exp.assign('N', msg.parts.count);
          }
          values.push([
            rule.v.exp ? await evaluate(rule.v.exp, msg) : this.read(rule.v, msg),
            rule.v2.exp ? await evaluate(rule.v2.exp, msg) : this.read(rule.v2, msg),
          ]);
        }
        send(this.decide(msg, property, values));
        done();
      } catch (err) {
        done(err);
      }
    }
  }

  RED.nodes.registerType('switch', SwitchNode);
}
