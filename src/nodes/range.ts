import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';
/**
 * The range node: maps a number from [minin, maxin] onto [minout, maxout]. `action` scale maps
 * linearly (extrapolating), clamp limits the input first, roll wraps it into the input range,
 * drop discards messages outside it. A message without the property passes unchanged. As in
 * Node-RED, a reversed input range is swapped together with the output range, and rounding
 * narrows the output range to the whole numbers inside it.
 */

export default function (RED: RedApi) {
  class RangeNode extends RED.nodes.Node {
    action: string;
    round: boolean;
    minin: number;
    maxin: number;
    minout: number;
    maxout: number;
    property: string;

    constructor(config: NodeConfig) {
      super(config);
      this.action = String(config.action || 'scale');
      this.round = !!config.round;
      const minin = Number(config.minin);
      const maxin = Number(config.maxin);
      const minout = Number(config.minout);
      const maxout = Number(config.maxout);
      const swap = minin > maxin;
      this.minin = swap ? maxin : minin;
      this.maxin = swap ? minin : maxin;
      this.minout = swap ? maxout : minout;
      this.maxout = swap ? minout : maxout;
      if (this.round) {
        this.maxout = Math.floor(this.maxout);
        this.minout = Math.ceil(this.minout);
      }
      this.property = String(config.property || 'payload');
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.map(msg, send, done));
    }

    private map(msg: Msg, send: SendFn, done: DoneFn): void {
      const value = RED.util.getMessageProperty(msg, this.property);
      if (value === undefined) {
        send(msg);
        done();
        return;
      }
      let n = Number(value);
      if (Number.isNaN(n)) {
        this.log(`Not a number: ${String(value)}`);
        done();
        return;
      }
      if (this.action === 'drop' && (n < this.minin || n > this.maxin)) {
        done();
        return;
      }
      if (this.action === 'clamp') n = Math.min(Math.max(n, this.minin), this.maxin);
      else if (this.action === 'roll') {
        const span = this.maxin - this.minin;
        n = (((n - this.minin) % span) + span) % span + this.minin;
      }
      // Node-RED's operation order, so results match it to the last bit.
      let out = ((n - this.minin) / (this.maxin - this.minin)) * (this.maxout - this.minout) + this.minout;
      if (this.round) out = Math.round(out);
      RED.util.setMessageProperty(msg, this.property, out);
      send(msg);
      done();
    }
  }

  RED.nodes.registerType('range', RangeNode);
}
