/**
 * The csv node: CSV text becomes objects keyed by column name (one message per row, or one
 * message with an array), and objects or arrays become CSV text. Parsing is RFC 4180 (see
 * lib/csv-text.ts). Rows arriving one per message with `msg.parts` (as a file-in node reading
 * lines sends them) are handled as one document: the header comes from the first, counts are
 * shifted past skipped and header lines, and the last row carries `complete`.
 */
import { Node, type DoneFn, type Msg, type NodeConfig, type SendFn } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';
import { formatRow, parseCsv, type Cell } from './lib/csv-text.js';

const NUMBER = /^[-]?(?!E)(?!0\d)\d*\.?\d*(E-?\+?)?\d+$/i;
const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/** Column names from a template or header row: trimmed and unquoted; empty names skip a column. */
function columnNames(text: string, sep: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const cells = parseCsv(trimmed, trimmed.includes(sep) ? sep : ',').rows[0] ?? [];
  return cells.map((c) => (c ?? '').replace(/"/g, '').trim());
}

const columnsText = (names: string[]) => names.filter((v) => v).map((v) => (v.includes(',') ? `"${v}"` : v)).join(',');

export default function (RED: RedApi) {
  class CsvNode extends Node {
    private readonly sep: string;
    private readonly ret: string;
    private readonly multi: string;
    private readonly hdrin: boolean;
    private readonly hdrout: string;
    private readonly skip: number;
    private readonly parseNumbers: boolean;
    private readonly includeEmpty: boolean;
    private readonly includeNull: boolean;
    private readonly configured: string[];
    /** Column names in use: the configured ones, or the last header row read. */
    private columns: string[];
    private hdrSent = false;
    private warnedNoTemplate = false;
    /** Rows of a one-line-per-message sequence collected for a single array output. */
    private store: Record<string, unknown>[] = [];

    constructor(config: NodeConfig) {
      super(config);
      this.sep = String(config.sep || ',').replace('\\t', '\t').replace('\\n', '\n').replace('\\r', '\r');
      this.ret = String(config.ret || '\n').replace('\\n', '\n').replace('\\r', '\r');
      this.multi = (config.multi as string) || 'one';
      this.hdrin = config.hdrin === true || config.hdrin === 'true';
      const hdrout = config.hdrout;
      this.hdrout = hdrout === true ? 'all' : !hdrout ? 'none' : String(hdrout);
      this.skip = parseInt(String(config.skip || 0), 10) || 0;
      this.parseNumbers = config.strings === undefined ? true : config.strings === true || config.strings === 'true';
      this.includeEmpty = config.include_empty_strings === true || config.include_empty_strings === 'true';
      this.includeNull = config.include_null_values === true || config.include_null_values === 'true';
      this.configured = columnNames(String(config.temp || ''), this.sep);
      this.columns = this.configured;
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        if (has(msg, 'reset')) this.hdrSent = false;
        if (!has(msg, 'payload')) {
          if (!has(msg, 'reset')) send(msg);
          done();
          return;
        }
        try {
          if (typeof msg.payload === 'object' && msg.payload !== null) this.toCsv(msg, send);
          else if (typeof msg.payload === 'string') this.fromCsv(msg, send);
          else this.warn('This node only handles CSV strings or js objects.');
          done();
        } catch (err) {
          done(err);
        }
      });
    }

    private toCsv(msg: Msg, send: SendFn): void {
      const rows: unknown[] = Array.isArray(msg.payload) ? msg.payload : [msg.payload];
      let columns = this.configured;
      if (columns.length === 0 && typeof msg.columns === 'string') columns = columnNames(msg.columns, ',');
      const objects = rows.some((r) => r !== null && typeof r === 'object' && !Array.isArray(r));
      if (columns.length === 0 && objects) {
        const first = rows.find((r) => r !== null && typeof r === 'object' && !Array.isArray(r)) as Record<string, unknown>;
        columns = Object.keys(first);
        if (this.hdrout === 'none' && !this.warnedNoTemplate) {
          this.warnedNoTemplate = true;
          this.warn('No columns template specified for object -> CSV.');
        }
      }
      let out = '';
      // Rows of plain arrays with no template or msg.columns have no names to write.
      if (this.hdrout !== 'none' && !this.hdrSent && columns.length) {
        out += formatRow(columns, this.sep) + this.ret;
        if (this.hdrout === 'once') this.hdrSent = true;
      }
      // A flat array of values is a single row.
      const list = rows.every((r) => r === null || typeof r !== 'object') ? [rows] : rows;
      for (const row of list) {
        if (Array.isArray(row)) out += formatRow(row.map(cellText), this.sep) + this.ret;
        else if (row !== null && typeof row === 'object') {
          const record = row as Record<string, unknown>;
          out += formatRow(columns.map((c) => (c === '' ? '' : cellText(record[c]))), this.sep) + this.ret;
        }
      }
      msg.payload = out;
      msg.columns = columnsText(columns);
      if (out !== '') send(msg);
    }

    private fromCsv(msg: Msg, send: SendFn): void {
      const parts = msg.parts && typeof msg.parts === 'object' ? msg.parts : undefined;
      const lineNumber = parts ? Number(parts.index) || 0 : 0;
      const last = parts !== undefined && has(parts, 'count') && parts.index + 1 >= parts.count;
      const { rows, unterminated } = parseCsv(msg.payload, this.sep);
      if (unterminated) this.warn('Malformed CSV data - output probably corrupt.');
      // Skipped and header lines are counted from the start of the document this message belongs to.
      let first = 0;
      if (lineNumber < this.skip) first = this.skip - lineNumber;
      const headerLine = this.hdrin && lineNumber <= this.skip;
      if (headerLine && rows.length > first) {
        this.columns = (rows[first] as Cell[]).map((c) => (c ?? '').replace(/"/g, '').trim());
        first++;
      }
      const objects: Record<string, unknown>[] = [];
      for (let r = first; r < rows.length; r++) {
        const o = this.toObject(rows[r]);
        if (Object.keys(o).length) objects.push(o);
      }
      const names = this.columns.length ? this.columns : this.generatedNames(rows);
      const columns = columnsText(names);
      if (this.multi !== 'one') {
        if (parts && rows.length <= 1) {
          this.store.push(...objects);
          if (parts.index + 1 === parts.count) {
            msg.payload = this.store;
            msg.columns = columns;
            delete msg.parts;
            this.store = [];
            send(msg);
          }
          return;
        }
        msg.payload = objects;
        msg.columns = columns;
        send(msg);
        return;
      }
      const shift = this.skip + (this.hdrin ? 1 : 0);
      delete msg.payload;
      for (let i = 0; i < objects.length; i++) {
        const m: Msg = RED.util.cloneMessage(msg);
        m.payload = objects[i];
        m.columns = columns;
        if (!parts) m.parts = { id: msg._msgid, index: i, count: objects.length };
        else {
          m.parts.index -= shift;
          if (has(m.parts, 'count')) m.parts.count -= shift;
        }
        if (last) m.complete = true;
        send(m);
      }
      if (parts && last && objects.length === 0) send({ complete: true });
    }

    private generatedNames(rows: Cell[][]): string[] {
      const width = rows.reduce((w, r) => Math.max(w, r.length), 0);
      return Array.from({ length: width }, (_, i) => `col${i + 1}`);
    }

    private toObject(row: Cell[]): Record<string, unknown> {
      const o: Record<string, unknown> = {};
      const named = this.columns.length > 0;
      for (let j = 0; j < row.length; j++) {
        const name = named ? this.columns[j] : `col${j + 1}`;
        if (!name) continue;
        const cell = row[j];
        if (cell === null) {
          if (this.includeNull) o[name] = null;
        } else if (cell === '') {
          if (this.includeEmpty) o[name] = '';
        } else o[name] = this.parseNumbers && NUMBER.test(cell) ? parseFloat(cell) : cell;
      }
      return o;
    }
  }

  function cellText(value: unknown): string {
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? RED.util.ensureString(value) : String(value);
  }

  RED.nodes.registerType('csv', CsvNode);
}
