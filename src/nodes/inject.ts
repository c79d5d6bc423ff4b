import type { DoneFn, Msg, NodeConfig, NodeInstance, PreparedJSONata, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';
import type { AdminRequest, AdminResponse } from './lib/admin-route.js';
import { evaluateJSONata } from './lib/jsonata.js';

interface Prop {
  p: string;
  v: unknown;
  vt: string;
  exp?: PreparedJSONata;
}

type Timer = ReturnType<typeof setTimeout>;

/** setTimeout's limit; longer waits are taken in steps. */
const MAX_DELAY = 2 ** 31 - 1;
/** Node-RED refuses repeats longer than this many seconds (setInterval's limit). */
const MAX_REPEAT = 2147483;

/**
 * A cron schedule in the forms the inject editor writes (`*`, `a`, `a-b`, `* /n`, `a-b/n`,
 * lists), five fields or six with seconds first. Day of month and day of week combine as in
 * cron: when both are restricted, either may match.
 */
class Cron {
  private readonly fields: Set<number>[];
  private readonly seconds: boolean;
  private readonly anyDom: boolean;
  private readonly anyDow: boolean;

  constructor(expr: string) {
    const parts = expr.trim().split(/\s+/);
    if (parts.length !== 5 && parts.length !== 6) throw new Error(`expected 5 or 6 fields, got ${parts.length}`);
    this.seconds = parts.length === 6;
    if (!this.seconds) parts.unshift('0');
    const ranges: [number, number][] = [[0, 59], [0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];
    this.fields = parts.map((f, i) => Cron.field(f, ranges[i][0], ranges[i][1]));
    if (this.fields[5].has(7)) this.fields[5].add(0);
    this.anyDom = parts[3] === '*' || parts[3] === '?';
    this.anyDow = parts[5] === '*' || parts[5] === '?';
  }

  private static field(text: string, min: number, max: number): Set<number> {
    const out = new Set<number>();
    for (const item of text.split(',')) {
      const m = /^(\*|\?|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
      if (!m) throw new Error(`unsupported field "${text}"`);
      const from = m[2] !== undefined ? Number(m[2]) : min;
      const to = m[3] !== undefined ? Number(m[3]) : m[2] !== undefined && m[4] === undefined ? from : max;
      const step = m[4] !== undefined ? Number(m[4]) : 1;
      if (from < min || to > max || from > to || step < 1) throw new Error(`field "${text}" is out of range`);
      for (let v = from; v <= to; v += step) out.add(v);
    }
    return out;
  }

  /** The first matching time after `from`, searched a year ahead at most. */
  next(from: number): number | undefined {
    const d = new Date(from);
    d.setMilliseconds(0);
    if (this.seconds) d.setSeconds(d.getSeconds() + 1);
    else d.setMinutes(d.getMinutes() + 1, 0, 0);
    const limit = from + 366 * 86400_000;
    const [sec, min, hour, dom, month, dow] = this.fields;
    while (d.getTime() <= limit) {
      const dayOk = this.anyDom && this.anyDow ? true
        : this.anyDom ? dow.has(d.getDay())
        : this.anyDow ? dom.has(d.getDate())
        : dom.has(d.getDate()) || dow.has(d.getDay());
      if (!month.has(d.getMonth() + 1) || !dayOk) d.setHours(24, 0, 0, 0);
      else if (!hour.has(d.getHours())) d.setMinutes(60, 0, 0);
      else if (!min.has(d.getMinutes())) d.setSeconds(60, 0);
      else if (!sec.has(d.getSeconds())) d.setSeconds(d.getSeconds() + 1);
      else return d.getTime();
    }
    return undefined;
  }
}

export default function (RED: RedApi) {
  /** Node-RED's migration of the pre-`props` form: payload/payloadType and topic on the node. */
  function normaliseProps(config: NodeConfig, node: NodeInstance): Prop[] {
    const raw = Array.isArray(config.props) ? (config.props as Partial<Prop>[]) : [{ p: 'payload' }, { p: 'topic', vt: 'str' }];
    return raw.map((prop) => {
      const p: Prop = { p: String(prop.p ?? ''), v: prop.v, vt: prop.vt ?? 'str' };
      if (p.p === 'payload' && !Object.prototype.hasOwnProperty.call(prop, 'v')) {
        p.v = config.payload ?? '';
        p.vt = typeof config.payloadType === 'string' ? config.payloadType : 'str';
        if (p.vt === 'string' || p.vt === 'none') p.vt = 'str';
        if (config.payloadType === 'none') p.v = '';
      } else if (p.p === 'topic' && p.vt === 'str' && !Object.prototype.hasOwnProperty.call(prop, 'v')) {
        p.v = config.topic ?? '';
      }
      if (p.v === undefined || p.v === null) p.v = '';
      // An invalid expression is reported now and again at each injection, as in Node-RED.
      if (p.vt === 'jsonata' && p.v) {
        try {
          p.exp = RED.util.prepareJSONataExpression(String(p.v), node);
        } catch (err) {
          node.error(`Invalid JSONata expression: ${(err as Error).message}`);
        }
      }
      return p;
    });
  }

  class InjectNode extends RED.nodes.Node {
    props: Prop[];
    repeat: number;
    crontab: string;
    /** Node-RED names this `once`, which would hide EventEmitter.once. */
    injectOnce: boolean;
    onceDelay: number;
    private readonly timers: Timer[] = [];
    private interval: ReturnType<typeof setInterval> | undefined;
    private readonly async: boolean;

    constructor(config: NodeConfig) {
      super(config);
      this.props = normaliseProps(config, this);
      this.async = this.props.some((p) => p.vt === 'jsonata');
      this.repeat = Number(config.repeat) > 0 ? Number(config.repeat) : 0;
      this.crontab = typeof config.crontab === 'string' ? config.crontab.trim() : '';
      this.injectOnce = config.once === true || config.once === 'true';
      // As Node-RED: only a missing or empty delay becomes 0.1 s; a configured "0" injects at once.
      this.onceDelay = (Number(config.onceDelay || 0.1) || 0) * 1000;
      if (this.repeat > MAX_REPEAT) {
        this.error('Interval too large');
        this.repeat = 0;
      }
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.inject(msg, send, done));
      this.on('close', () => this.stopTimers());
      if (this.injectOnce) {
        this.timers.push(setTimeout(() => {
          this.receive({});
          this.schedule();
        }, this.onceDelay));
      } else {
        this.schedule();
      }
    }

    private schedule(): void {
      if (this._closed) return;
      if (this.repeat > 0) {
        this.interval = setInterval(() => this.receive({}), this.repeat * 1000);
      } else if (this.crontab) {
        let cron: Cron;
        try {
          cron = new Cron(this.crontab);
        } catch (err) {
          this.warn(`crontab "${this.crontab}" is not supported (${(err as Error).message}); this inject node will not repeat`);
          return;
        }
        this.scheduleCron(cron);
      }
    }

    private scheduleCron(cron: Cron): void {
      const at = cron.next(Date.now());
      if (at === undefined || this._closed) return;
      const wait = at - Date.now();
      this.timers.length = 0;
      this.timers.push(setTimeout(() => {
        if (Date.now() >= at) this.receive({});
        this.scheduleCron(cron);
      }, Math.min(Math.max(wait, 0), MAX_DELAY)));
    }

    private stopTimers(): void {
      for (const t of this.timers) clearTimeout(t);
      this.timers.length = 0;
      if (this.interval) clearInterval(this.interval);
      this.interval = undefined;
    }

    private inject(msg: Msg, send: SendFn, done: DoneFn): void | Promise<void> {
      let props = this.props;
      if (Array.isArray(msg.__user_inject_props__)) props = msg.__user_inject_props__ as Prop[];
      delete msg.__user_inject_props__;
      if (this.async || props !== this.props) return this.injectAsync(props, msg, send, done);
      const errors: string[] = [];
      for (const prop of props) {
        if (!prop.p) continue;
        try {
          RED.util.setMessageProperty(msg, prop.p, RED.util.evaluateNodeProperty(prop.v, prop.vt, this, msg), true);
        } catch (err) {
          errors.push(String(err));
        }
      }
      this.finish(msg, errors, send, done);
    }

    /** For JSONata values and for props given with the message (which may hold JSONata). */
    private async injectAsync(props: Prop[], msg: Msg, send: SendFn, done: DoneFn): Promise<void> {
      const errors: string[] = [];
      for (const prop of props) {
        if (!prop.p) continue;
        const vt = prop.vt ?? 'str';
        if (vt !== 'jsonata') {
          try {
            RED.util.setMessageProperty(msg, prop.p, RED.util.evaluateNodeProperty(prop.v ?? '', vt, this, msg), true);
          } catch (err) {
            errors.push(String(err));
          }
          continue;
        }
        if (!prop.v) continue;
        let exp: PreparedJSONata;
        try {
          exp = prop.exp ?? RED.util.prepareJSONataExpression(String(prop.v), this);
        } catch (err) {
          errors.push((err as Error).message);
          continue;
        }
        try {
          RED.util.setMessageProperty(msg, prop.p, await evaluateJSONata(RED.util, exp, msg), true);
        } catch (err) {
          errors.push(`Invalid JSONata expression: ${(err as Error).message}`);
        }
      }
      this.finish(msg, errors, send, done);
    }

    private finish(msg: Msg, errors: string[], send: SendFn, done: DoneFn): void {
      if (errors.length) {
        done(errors.join('; '));
        return;
      }
      send(msg);
      done();
    }
  }

  RED.nodes.registerType('inject', InjectNode);

  const admin = RED.httpAdmin;
  // A runtime without an HTTP server has no editor to answer.
  if (!admin) return;
  // The editor's inject button: the body carries the props to send when the user edited them.
  admin.post('/inject/:id', RED.auth.needsPermission('inject.write'), (req: AdminRequest, res: AdminResponse) => {
    const node = RED.nodes.getNode(req.params.id);
    if (!(node instanceof InjectNode)) {
      res.status(404).json({ code: 'not_found', message: `No inject node ${req.params.id}` });
      return;
    }
    const body = req.body as Msg | undefined;
    node.receive(body && typeof body === 'object' && body.__user_inject_props__ ? body : undefined);
    res.sendStatus(200);
  });
}
