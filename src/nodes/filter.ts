import type { Msg, NodeConfig, RedApi } from '../runtime/red-api/red-api-types.js';
/**
 * The filter node (type `rbe`, report by exception). `func`:
 * - rbe: pass only when the value changed; rbei: the same, ignoring the first value;
 * - deadband / deadbandEq: pass when a number moved more than (or at least) `gap`;
 * - narrowband / narrowbandEq: pass when it stays within (or at most) `gap` of the reference.
 * `gap` may be "n%" of the reference. `inout` "out" compares with the last value sent, "in" with
 * the last value received. Values are kept per topic (`topi`) unless `septopics` is false.
 * `msg.reset` forgets the topic's value (all values when the message has no topic).
 */

const NO_TOPIC = '_no_topic';

export default function (RED: RedApi) {
  class FilterNode extends RED.nodes.Node {
    func: string;
    gap: number;
    percent: boolean;
    start: string;
    inout: string;
    property: string;
    topi: string;
    septopics: boolean;
    previous = new Map<string, unknown>();

    constructor(config: NodeConfig) {
      super(config);
      this.func = String(config.func || 'rbe');
      const gap = String(config.gap || '0');
      this.percent = gap.endsWith('%');
      this.gap = parseFloat(gap) || 0;
      this.start = config.start === undefined || config.start === null ? '' : String(config.start);
      this.inout = String(config.inout || 'out');
      this.property = String(config.property || 'payload');
      this.topi = String(config.topi || 'topic');
      this.septopics = config.septopics !== false;
      this.on('input', (msg: Msg) => this.filter(msg));
    }

    private filter(msg: Msg): void {
      let topic: unknown;
      try {
        topic = RED.util.getMessageProperty(msg, this.topi);
      } catch {
        topic = undefined;
      }
      if (Object.prototype.hasOwnProperty.call(msg, 'reset')) {
        if (this.septopics && typeof topic === 'string' && topic !== '') this.previous.delete(topic);
        else this.previous.clear();
      }
      let value: unknown;
      try {
        value = RED.util.getMessageProperty(msg, this.property);
      } catch {
        value = undefined;
      }
      // As in Node-RED, a message without the property neither passes nor moves the reference.
      if (value === undefined) return;
      const key = this.septopics && topic ? String(topic) : NO_TOPIC;
      if (this.func === 'rbe' || this.func === 'rbei') this.byChange(msg, key, value);
      else this.byBand(msg, key, value);
    }

    private byChange(msg: Msg, key: string, value: unknown): void {
      const seen = this.previous.has(key);
      let last = this.previous.get(key);
      // As in Node-RED, an object (or null) is compared with {} when the last value was not an
      // object, and {} becomes the reference: a first empty object is not a change.
      if (typeof value === 'object' && typeof last !== 'object') this.previous.set(key, (last = {}));
      const changed = typeof value === 'object' ? !RED.util.compareObjects(value, last) : value !== last;
      if (!changed) return;
      this.previous.set(key, RED.util.cloneMessage(value));
      if (this.func === 'rbe' || seen) this.send(msg);
    }

    private byBand(msg: Msg, key: string, value: unknown): void {
      const n = parseFloat(value as string);
      if (Number.isNaN(n)) {
        this.warn('rbe: no number found in payload');
        return;
      }
      const narrow = this.func === 'narrowband' || this.func === 'narrowbandEq';
      let ref = this.previous.get(key) as number | undefined;
      if (ref === undefined && narrow) ref = this.start === '' ? n : Number(this.start);
      // With no reference yet a percentage gap is 0, as in Node-RED.
      const gap = this.percent ? (ref === undefined ? 0 : Math.abs((ref * this.gap) / 100)) : this.gap;
      if (ref === undefined) ref = n - gap - 1;
      this.previous.set(key, ref);
      const diff = Math.abs(n - ref);
      const pass = diff === gap
        ? this.func === 'deadbandEq' || this.func === 'narrowband'
        : diff > gap ? this.func === 'deadband' || this.func === 'deadbandEq' : narrow;
      if (pass) {
        if (this.inout === 'out') this.previous.set(key, n);
        this.send(msg);
      }
      if (this.inout === 'in') this.previous.set(key, n);
    }
  }

  RED.nodes.registerType('rbe', FilterNode);
}
