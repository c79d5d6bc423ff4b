/**
 * The html node: selects elements of an HTML document with a CSS selector (the node's `tag`, or
 * `msg.select` when the node has none) and returns each match's inner markup, text, attributes,
 * or attributes plus inner markup under the `chr` key ("compl"), as one array or as one message
 * per match carrying `msg.parts`. Input is parsed as a whole document, as Node-RED does, so
 * `html`, `head`, `body` and `title` can be selected.
 */
import type * as Cheerio from 'cheerio';
import { lazy } from '../base/lazy.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';
import { onPropertyInput } from './lib/property-input.js';

const cheerio = lazy<typeof Cheerio>('cheerio');

type Picker = ($: Cheerio.CheerioAPI, el: any, chr: string) => unknown;

/** Markup is written in cheerio's XML form, as Node-RED does (void elements self-close). */
const PICKERS: Record<string, Picker> = {
  html: ($, el) => cheerio().load(($(el).html() ?? '').trim(), null, false).xml(),
  text: ($, el) => $(el).text(),
  attr: (_$, el) => ({ ...el.attribs }),
  compl: ($, el, chr) => ({ [chr]: ($(el).html() ?? '').trim(), ...el.attribs }),
};

/** Node-RED returns nothing for an unknown `ret`: empty arrays, no messages. */
const NOTHING: Picker = () => null;

export default function (RED: RedApi) {
  class HtmlNode extends RED.nodes.Node {
    private readonly property: string;
    private readonly outproperty: string;
    private readonly tag: string;
    private readonly multi: boolean;
    private readonly pick: Picker;
    private readonly chr: string;

    constructor(config: NodeConfig) {
      super(config);
      this.property = (config.property as string) || 'payload';
      this.outproperty = (config.outproperty as string) || this.property;
      this.tag = (config.tag as string) || '';
      this.multi = config.as === 'multi';
      this.pick = Object.hasOwn(PICKERS, (config.ret as string) || 'html') ? PICKERS[(config.ret as string) || 'html'] : NOTHING;
      this.chr = (config.chr as string) || '_';
      onPropertyInput(RED, this, this.property, (value: any, msg: Msg, send: SendFn, done: DoneFn) => {
        try {
          this.select(msg, String(value), send);
          done();
        } catch (err) {
          done((err as Error).message);
        }
      });
    }

    private select(msg: Msg, html: string, send: SendFn): void {
      const selector = Object.hasOwn(msg, 'select') ? this.tag || msg.select : this.tag;
      const $ = cheerio().load(html);
      const matches = $(selector).toArray();
      const values: unknown[] = [];
      for (const el of matches) {
        const value = this.pick($, el, this.chr);
        if (value !== null) values.push(value);
      }
      if (!this.multi) {
        RED.util.setMessageProperty(msg, this.outproperty, values);
        send(msg);
        return;
      }
      for (let index = 0; index < values.length; index++) {
        // Node-RED skips empty results but still counts them in parts.count.
        if (!values[index]) continue;
        const m: Msg = RED.util.cloneMessage(msg);
        RED.util.setMessageProperty(m, this.outproperty, values[index]);
        m.parts = { id: msg._msgid, index, count: matches.length, type: 'string', ch: '' };
        send(m);
      }
    }
  }

  RED.nodes.registerType('html', HtmlNode);
}
