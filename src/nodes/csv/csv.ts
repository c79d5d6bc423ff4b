/**
 * The csv node: CSV text becomes objects keyed by column name (one message per row, or one
 * message with an array), and objects or arrays become CSV text. Like Node-RED 4 it has two
 * modes picked by the `spec` property: "rfc" (what new nodes get; rfc.ts) and legacy
 * (every node without `spec`, i.e. flows exported before 4.0; legacy.ts), which differ
 * in parsing, quoting, defaults and errors. Both take rows arriving one per message with
 * `msg.parts` (as a file-in node reading lines sends them) as one document.
 */
import { has, readCsvConfig, type CsvHost } from './config.js';
import { LegacyCsv } from './legacy.js';
import { RfcCsv } from './rfc.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../../runtime/red-api/red-api-types.js';

const BAD_TEMPLATE = 'Malformed columns template.';

export default function (RED: RedApi) {
  class CsvNode extends RED.nodes.Node {
    constructor(config: NodeConfig) {
      super(config);
      this.status({});
      const rfc = config.spec === 'rfc';
      const host: CsvHost = {
        warn: (text) => this.warn(text),
        status: (s) => this.status(s),
        clone: (msg) => RED.util.cloneMessage(msg),
        ensureString: RED.util.ensureString,
      };
      let mode: RfcCsv | LegacyCsv;
      if (!rfc) mode = new LegacyCsv(readCsvConfig(config, '\n'), host);
      else {
        try {
          mode = new RfcCsv(readCsvConfig(config, '\r\n'), host);
        } catch {
          // Node-RED leaves such a node without an input handler: messages stop here.
          this.warn(BAD_TEMPLATE);
          this.status({ fill: 'red', shape: 'dot', text: BAD_TEMPLATE });
          return;
        }
      }
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        if (rfc) this.status({});
        if (has(msg, 'reset')) mode.reset();
        if (has(msg, 'payload')) {
          mode.input(msg, send, done);
          return;
        }
        if (!has(msg, 'reset')) send(msg);
        done();
      });
    }
  }

  RED.nodes.registerType('csv', CsvNode);
}
