/**
 * The csv node's legacy mode: what every csv node exported before Node-RED 4.0 (no `spec`
 * property) runs. Node-RED reads CSV here character by character, and flows depend on its exact
 * results, so this mode reproduces them: names are trimmed and unquoted, an empty field is null
 * when a separator or line start precedes it, CR and LF each end a record, numbers follow one
 * strict pattern, and the column template (with the separator it was last split by) is node
 * state shared by both directions.
 */
import { has, sequencePosition, type CsvConfig, type CsvHost } from './config.js';
import { countBreaks, sendAllRows, sendRows, type RowStore } from './rfc.js';
import type { DoneFn, Msg, SendFn } from '../../runtime/red-api/red-api-types.js';

const NUMBER = /^[-]?(?!E)(?!0\d)\d*\.?\d*(E-?\+?)?\d+$/i;
const QUOTE = '"';

/** Splits at separators outside quotes. */
function splitter(sep: string): RegExp {
  return new RegExp(`${sep.replace(/[-[\]{}()*+!<=:?./\\^$|#\s,]/g, '\\$&')}(?=(?:(?:[^"]*"){2})*[^"]*$)`, 'g');
}

const isBlank = (t: string[]) => t.length === 1 && t[0] === '';
const columnsOf = (template: string[]) => template.map((v) => (v.includes(',') ? `"${v}"` : v));

export class LegacyCsv {
  private readonly notemplate: boolean;
  private template: string[];
  /** Node-RED re-splits templates with the separator of the last split that named one. */
  private split: RegExp;
  /** False once a template came out empty: columns are then named col1, col2, … */
  private goodtmpl = true;
  private hdrSent = false;
  private warnedNoTemplate = false;
  private readonly rowStore: RowStore = { rows: [] };

  constructor(private readonly c: CsvConfig, private readonly host: CsvHost) {
    this.split = splitter(',');
    this.template = this.clean(c.temp);
    this.notemplate = isBlank(this.template);
  }

  reset(): void {
    this.hdrSent = false;
  }

  /** Column names: trimmed, quotes removed. */
  private clean(col: string, sep?: string): string[] {
    if (sep) this.split = splitter(sep);
    const names = col.trim().split(this.split).map((x) => x.replace(/"/g, '').trim());
    this.goodtmpl = !isBlank(names);
    return names;
  }

  input(msg: Msg, send: SendFn, done: DoneFn): void {
    const payload = msg.payload;
    if (typeof payload !== 'object' && typeof payload !== 'string') {
      this.host.warn('This node only handles CSV strings or js objects.');
      done();
      return;
    }
    try {
      if (typeof payload === 'object') this.toCsv(msg, send);
      else this.fromCsv(msg, payload, send);
      done();
    } catch (err) {
      done(err);
    }
  }

  private toCsv(msg: Msg, send: SendFn): void {
    const { sep } = this.c;
    const later = has(msg, 'parts') && msg.parts && has(msg.parts, 'index') && msg.parts.index > 0;
    if (!(this.notemplate && later)) this.template = this.clean(this.c.temp);
    if (!Array.isArray(msg.payload)) msg.payload = [msg.payload];
    const out: string[] = [];
    if (this.c.hdrout !== 'none' && !this.hdrSent) {
      if (isBlank(this.template)) {
        this.template = has(msg, 'columns') ? this.clean(msg.columns || '', ',') : Object.keys(msg.payload[0]);
      }
      out.push(this.template.map((v) => (v.includes(sep) ? `"${v}"` : v)).join(sep));
      if (this.c.hdrout === 'once') this.hdrSent = true;
    }
    for (let s = 0; s < msg.payload.length; s++) {
      if (Array.isArray(msg.payload[s]) || typeof msg.payload[s] !== 'object') {
        // A flat array of values is one row.
        if (typeof msg.payload[s] !== 'object') msg.payload = [msg.payload];
        out.push(this.valuesRow(msg.payload[s]));
      } else out.push(this.objectRow(msg, msg.payload, s));
    }
    msg.payload = out.join(this.c.ret) + this.c.ret;
    msg.columns = columnsOf(this.template).join(',');
    send(msg);
  }

  private valuesRow(row: any[]): string {
    const { sep } = this.c;
    for (let t = 0; t < row.length; t++) {
      if (row[t] === undefined) row[t] = '';
      const text: string = row[t].toString();
      if (text.includes(QUOTE)) row[t] = QUOTE + text.replace(/"/g, '""') + QUOTE;
      else if (text.includes(sep) || text.includes('\n')) row[t] = QUOTE + text + QUOTE;
    }
    return row.join(sep);
  }

  private objectRow(msg: Msg, rows: any[], s: number): string {
    const { sep } = this.c;
    if (isBlank(this.template) && has(msg, 'columns')) this.template = this.clean(msg.columns || '', ',');
    const row = rows[s];
    const cells: string[] = [];
    if (isBlank(this.template)) {
      if (!this.warnedNoTemplate) {
        this.warnedNoTemplate = true;
        this.host.warn('No columns template specified for object -> CSV.');
      }
      // Keys of the first row; nested objects and null are left out. Node-RED tests the key, not
      // the value, for a line break.
      for (const key in rows[0]) {
        if (!row.hasOwnProperty(key) || typeof row[key] === 'object') continue;
        const q = row[key] === undefined ? '' : String(row[key]);
        if (q.includes(QUOTE)) cells.push(QUOTE + q.replace(/"/g, '""') + QUOTE);
        else if (q.includes(sep) || key.includes('\n')) cells.push(QUOTE + q + QUOTE);
        else cells.push(q);
      }
      return cells.join(sep);
    }
    for (const name of this.template) {
      if (name === '') {
        cells.push('');
        continue;
      }
      let value = row[name];
      if (value === undefined) value = '';
      const p = this.host.ensureString(value);
      if (p.includes(QUOTE)) cells.push(QUOTE + p.replace(/"/g, '""') + QUOTE);
      else if (p.includes(sep) || p.includes('\n')) cells.push(QUOTE + p + QUOTE);
      else cells.push(p);
    }
    return cells.join(sep);
  }

  private fromCsv(msg: Msg, line: string, send: SendFn): void {
    const c = this.c;
    const position = sequencePosition(msg, c.skip);
    const { parts, last } = position;
    let { first, lineCount } = position;
    const breaks = countBreaks(line, 0);
    if (parts !== undefined && c.multi === 'mult' && breaks > 1) first = true;
    let outside = true;
    let j = 0;
    let k: (string | null)[] = [''];
    let o: Record<string, unknown> = {};
    const rows: Record<string, unknown>[] = [];
    let header = '';
    const template = () => {
      if (!this.goodtmpl) this.template[j] = `col${j + 1}`;
      return this.template[j];
    };
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (first && lineCount < c.skip) {
        if (ch === '\n') lineCount++;
        continue;
      }
      if (c.hdrin === true && first) {
        const end = i === line.length - 1;
        if (ch === '\n' || ch === '\r' || end) {
          if (end) header += ch;
          this.template = this.clean(header, c.sep);
          first = false;
        } else header += ch;
        continue;
      }
      if (ch === QUOTE) {
        outside = !outside;
        // The second quote of a pair reopens the field and stands for one quote.
        if (line[i - 1] === QUOTE && !outside) k[j] += QUOTE;
      } else if (ch === c.sep && outside) {
        const name = template();
        if (name) {
          if (i === 0) throw new TypeError("Cannot read properties of undefined (reading 'includes')");
          if (line[i - 1] === c.sep || line[i - 1] === '\n') k[j] = null;
          this.put(o, name, k[j]);
        }
        j++;
        k[j] = i === line.length - 1 ? null : '';
      } else if ((ch === '\n' || ch === '\r') && outside) {
        const name = template();
        if (name) {
          if (line[i - 1] === c.sep) k[j] = null;
          this.put(o, name, k[j]);
        }
        if (Object.keys(o).length) rows.push(o);
        j = 0;
        k = [''];
        o = {};
        outside = true;
      } else k[j] += ch;
    }
    if (!outside) this.host.warn('Malformed CSV data - output probably corrupt.');
    const name = template();
    if (name) this.put(o, name, k[j]);
    if (Object.keys(o).length) rows.push(o);
    const columns = columnsOf(this.template).filter((v) => v).join(',');
    if (c.multi !== 'one') {
      sendAllRows(this.rowStore, msg, rows, Object.keys(o).length ? [o] : [], columns, parts, breaks, send);
      return;
    }
    sendRows(this.host, msg, rows, columns, c, parts !== undefined, last, send);
  }

  private put(o: Record<string, unknown>, name: string, cell: string | null | undefined): void {
    let v: unknown = cell;
    if (cell !== null && cell !== undefined && this.c.parseNumeric && NUMBER.test(cell.trim())) v = parseFloat(cell.trim());
    if (this.c.includeNull && v === null) o[name] = v;
    if (this.c.includeEmpty && v === '') o[name] = v;
    if (v !== null && v !== '') o[name] = v;
  }
}
