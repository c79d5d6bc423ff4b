import type { ContextScope, DoneFn, Msg, NodeConfig, NodeInstance, PreparedJSONata, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';
import { evaluateJSONata } from './lib/jsonata.js';

type Target = 'msg' | 'flow' | 'global';

/** One primitive step; `move` rules become two or four of these at construction. */
interface Step {
  t: 'set' | 'change' | 'delete';
  p: string;
  pt: Target;
  /** Context key and store of a flow/global target; `dynamicKey` when it embeds `[msg…]`. */
  key: string;
  store: string | undefined;
  dynamicKey: boolean;
  to: unknown;
  tot: string;
  exp: PreparedJSONata | null;
  dc: boolean;
  from: unknown;
  fromt: string;
  fromRE: RegExp | undefined;
}

interface FromValue {
  type: string | undefined;
  value: unknown;
  re: RegExp | undefined;
}

const SKIP = Symbol('skip');

/** Runs one construction step, rethrowing its failure in Node-RED's words. */
function invalid<T>(prefix: string, make: () => T, text?: string): T {
  try {
    return make();
  } catch (err) {
    throw new Error(text ?? prefix + (err as Error).message);
  }
}
const ESCAPE = /[-[\]{}()*+?.,\\^$|#\s]/g;
const CONTEXT_TYPES = new Set(['msg', 'flow', 'global']);
/** Values computed at construction because they cannot change per message. */
const CONSTANT = new Set(['str', 'num', 'bool', 'env']);

export default function (RED: RedApi) {
  /** The single-rule configuration of Node-RED 0.x, as Node-RED migrates it. */
  function legacyRules(config: NodeConfig): Record<string, unknown>[] {
    const t = config.action === 'replace' ? 'set' : config.action;
    const rule: Record<string, unknown> = { t, p: config.property || '' };
    if (t === 'set' || t === 'move') rule.to = config.to || '';
    else if (t === 'change') Object.assign(rule, { from: config.from || '', to: config.to || '', re: config.reg === null || config.reg });
    return [rule];
  }

  function step(node: NodeInstance, raw: Record<string, unknown>): Step {
    const t = raw.t as Step['t'];
    const pt = (raw.pt || 'msg') as Target;
    let to: unknown = raw.to ?? '';
    let tot = raw.tot as string | undefined;
    if (t === 'set' && !tot && typeof to === 'string' && to.startsWith('msg.')) {
      to = to.substring(4);
      tot = 'msg';
    }
    tot ||= 'str';
    const fromt = t === 'change' && raw.re ? 're' : ((raw.fromt as string) || 'str');
    const { key, store } = RED.util.parseContextStore(String(raw.p ?? ''));
    const s: Step = {
      t, p: String(raw.p ?? ''), pt, key, store, dynamicKey: /\[msg/.test(key),
      to, tot, exp: null, dc: raw.dc === true, from: raw.from ?? '', fromt, fromRE: undefined,
    };
    if (t === 'change' && !CONTEXT_TYPES.has(fromt)) {
      const source = String(s.from);
      s.fromRE = invalid('Invalid \'from\' property: ', () => new RegExp(fromt === 're' ? source : source.replace(ESCAPE, '\\$&'), 'g'));
    }
    if (tot === 'json' || tot === 'bin') s.to = invalid('', () => JSON.parse(String(to)), 'Invalid \'to\' JSON property');
    else if (tot === 'jsonata') s.exp = invalid('Invalid JSONata expression: ', () => RED.util.prepareJSONataExpression(String(to), node));
    else if (CONSTANT.has(tot)) s.to = RED.util.evaluateNodeProperty(to, tot, node, null);
    return s;
  }

  /** Expands a rule; a move out of a child into its parent goes through a temporary property. */
  function expand(node: NodeInstance, raw: Record<string, unknown>): Step[] {
    if (raw.t !== 'move') return [step(node, raw)];
    const p = String(raw.p ?? '');
    const to = String(raw.to ?? '');
    const pt = (raw.pt || 'msg') as string;
    const tot = (raw.tot || 'msg') as string;
    if (tot !== pt || (p.includes(to) && p !== to)) {
      return [step(node, { t: 'set', p: to, pt: tot, to: p, tot: pt }), step(node, { t: 'delete', p, pt })];
    }
    return [
      step(node, { t: 'set', p: '_temp_move', pt: tot, to: p, tot: pt }),
      step(node, { t: 'delete', p, pt }),
      step(node, { t: 'set', p: to, pt: tot, to: '_temp_move', tot: pt }),
      step(node, { t: 'delete', p: '_temp_move', pt }),
    ];
  }

  class ChangeNode extends RED.nodes.Node {
    private readonly steps: Step[] = [];
    private readonly async: boolean;

    constructor(config: NodeConfig) {
      super(config);
      const rules = Array.isArray(config.rules) ? (config.rules as Record<string, unknown>[]) : legacyRules(config);
      this.async = false;
      let valid = true;
      for (const rule of rules) {
        try {
          this.steps.push(...expand(this, rule));
        } catch (err) {
          // As in Node-RED, each bad rule (invalid JSON, regex or expression) is reported and the node stays inert.
          this.error((err as Error).message);
          valid = false;
        }
      }
      if (!valid) return;
      this.async = this.steps.some((s) => s.exp);
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        if (this.async) return this.applyAsync(msg, send, done);
        for (const s of this.steps) this.apply(msg, s, this.toValue(msg, s));
        send(msg);
        done();
      });
    }

    private async applyAsync(msg: Msg, send: SendFn, done: DoneFn): Promise<void> {
      for (const s of this.steps) {
        let value: unknown;
        if (s.exp) {
          try {
            value = await evaluateJSONata(RED.util, s.exp, msg);
          } catch (err) {
            this.error(`Invalid JSONata expression: ${(err as Error).message}`, msg);
            return;
          }
          if (s.dc) value = RED.util.cloneMessage(value);
        } else {
          value = this.toValue(msg, s);
        }
        this.apply(msg, s, value);
      }
      send(msg);
      done();
    }

    private toValue(msg: Msg, s: Step): unknown {
      if (s.t === 'delete') return undefined;
      let value: unknown;
      switch (s.tot) {
        case 'json':
          // Wrapped so the value itself is deep-cloned: cloneMessage treats top-level req/res apart.
          value = RED.util.cloneMessage({ value: s.to }).value;
          break;
        case 'bin':
          value = Buffer.from(s.to as string);
          break;
        case 'date':
          value = Date.now();
          break;
        case 'msg':
          // An unreadable source skips the rule, as in Node-RED.
          try {
            value = RED.util.getMessageProperty(msg, s.to as string);
          } catch {
            return SKIP;
          }
          break;
        case 'flow':
        case 'global':
          try {
            value = RED.util.evaluateNodeProperty(s.to, s.tot, this, msg);
          } catch {
            value = undefined;
          }
          break;
        default:
          value = s.to;
      }
      return s.dc ? RED.util.cloneMessage(value) : value;
    }

    private fromValue(msg: Msg, s: Step): FromValue {
      if (!CONTEXT_TYPES.has(s.fromt)) return { type: s.fromt, value: s.from, re: s.fromRE };
      const v = RED.util.evaluateNodeProperty(s.from, s.fromt, this, msg);
      if (typeof v === 'number' || v instanceof Number) return { type: 'num', value: v, re: undefined };
      if (typeof v === 'boolean') return { type: 'bool', value: v, re: undefined };
      if (v instanceof RegExp) return { type: 're', value: v, re: v };
      if (typeof v === 'string') return { type: 'str', value: v, re: new RegExp(v.replace(ESCAPE, '\\$&'), 'g') };
      throw new Error(`Invalid 'from' property: unsupported type: ${typeof v}`);
    }

    /** Node-RED's change: exact string match of a num/bool/str `from` replaces the whole value. */
    private changed(current: unknown, from: FromValue, value: unknown): { hit: boolean; value?: unknown } {
      if (typeof current === 'string') {
        if ((from.type === 'num' || from.type === 'bool' || from.type === 'str') && current === from.value) return { hit: true, value };
        return { hit: true, value: current.replace(from.re as RegExp, value as string) };
      }
      if ((typeof current === 'number' || current instanceof Number) && from.type === 'num') {
        return current == Number(from.value) ? { hit: true, value } : { hit: false };
      }
      if (typeof current === 'boolean' && from.type === 'bool' && current.toString() === String(from.value)) return { hit: true, value };
      return { hit: false };
    }

    private apply(msg: Msg, s: Step, value: unknown): void {
      if (value === SKIP) return;
      try {
        if (s.pt === 'msg') this.applyToMessage(msg, s, value);
        else this.applyToContext(msg, s, value);
      } catch (err) {
        // Node-RED ignores failures on message properties; context failures are reported.
        if (s.pt !== 'msg') this.error(err, msg);
      }
    }

    private applyToMessage(msg: Msg, s: Step, value: unknown): void {
      if (s.t === 'delete') {
        RED.util.setMessageProperty(msg, s.p, undefined);
      } else if (s.t === 'set') {
        if (!RED.util.setMessageProperty(msg, s.p, value)) this.warn(`Cannot set property of non-object type: ${s.p}`);
      } else {
        const result = this.changed(RED.util.getMessageProperty(msg, s.p), this.fromValue(msg, s), value);
        if (result.hit) RED.util.setMessageProperty(msg, s.p, result.value);
      }
    }

    private applyToContext(msg: Msg, s: Step, value: unknown): void {
      const scope = this.context()[s.pt as 'flow' | 'global'] as ContextScope;
      const key = s.dynamicKey ? RED.util.normalisePropertyExpression(s.key, msg, true) : s.key;
      if (s.t === 'change') {
        const result = this.changed(scope.get(key, s.store), this.fromValue(msg, s), value);
        if (result.hit) scope.set(key, result.value, s.store);
      } else {
        scope.set(key, s.t === 'delete' ? undefined : value, s.store);
      }
    }
  }

  RED.nodes.registerType('change', ChangeNode);
}
