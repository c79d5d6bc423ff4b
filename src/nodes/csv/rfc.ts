/**
 * The csv node's "rfc" mode (what Node-RED 4 gives new nodes): strict parsing of column templates
 * and header rows, lenient parsing of data rows (text.ts), cells quoted whenever they hold
 * a quote, the separator or a line break. The column template is node state: a header row read
 * from CSV, or the keys of an object turned into CSV, stays in use for the messages that follow,
 * as in Node-RED.
 */
import { columnsString, generatedHeaders, parseRows, quoteCell, rowsToObjects, type Cell } from './text.js';
import { has, sequencePosition, type CsvConfig, type CsvHost } from './config.js';
import type { DoneFn, Msg, SendFn } from '../../runtime/red-api/red-api-types.js';

const hasTemplate = (t: Cell[] | null): t is Cell[] => !!t && t.length > 0 && !(t.length === 1 && t[0] === '');

/** A column template: exactly one strictly parsed record, else null. */
function templateOf(text: string, separator = ','): Cell[] | null {
  if (typeof text !== 'string') return null;
  const { rows } = parseRows(text, { separator, strict: true });
  return rows.length === 1 ? rows[0] : null;
}

export class RfcCsv {
  private readonly configured: Cell[];
  private readonly noTemplate: boolean;
  private template: Cell[] | null;
  private hdrSent = false;
  private warnedNoTemplate = false;
  private readonly rowStore: RowStore = { rows: [] };

  /** Throws a CsvParseError for a malformed columns template. */
  constructor(private readonly c: CsvConfig, private readonly host: CsvHost) {
    this.configured = templateOf(c.temp) ?? [''];
    this.template = this.configured;
    this.noTemplate = !hasTemplate(this.configured);
  }

  reset(): void {
    this.hdrSent = false;
  }

  input(msg: Msg, send: SendFn, done: DoneFn): void {
    const payload = msg.payload;
    try {
      if (typeof payload === 'object') this.toCsv(msg, send);
      else if (typeof payload === 'string') {
        if (!this.fromCsv(msg, payload, send)) return;
      } else {
        const err = new Error('This node only handles CSV strings or js objects.');
        this.host.status({ fill: 'red', shape: 'dot', text: err.message });
        done(err);
        return;
      }
      done();
    } catch (err) {
      done(err);
    }
  }

  private toCsv(msg: Msg, send: SendFn): void {
    const { sep } = this.c;
    let data: any[] = msg.payload;
    let arrays = false;
    if (!Array.isArray(data)) data = [data];
    else if (data.length > 0 && typeof data[0] !== 'object') {
      data = [data];
      arrays = true;
    } else arrays = data.length > 0 && Array.isArray(data[0]);
    // Parts after the first of a sequence keep the columns the first one found.
    const later = has(msg, 'parts') && msg.parts && has(msg.parts, 'index') && msg.parts.index > 0;
    if (!(this.noTemplate && later)) this.template = this.configured;
    const lines: string[] = [];
    if (this.c.sendHeaders && !this.hdrSent) {
      if (!hasTemplate(this.template)) {
        this.template = has(msg, 'columns') ? templateOf(msg.columns || '') ?? [''] : Object.keys(data[0]);
      }
      lines.push(this.template!.map((name) => quoteCell(name || '', sep)).join(sep));
      if (this.c.hdrout === 'once') this.hdrSent = true;
    }
    for (const row of data) {
      if (arrays) lines.push(this.arrayRow(row));
      else lines.push(this.objectRow(msg, row, data[0]));
    }
    msg.payload = lines.join(this.c.ret) + this.c.ret;
    msg.columns = columnsString(this.template);
    send(msg);
  }

  private arrayRow(row: any): string {
    const template = hasTemplate(this.template) ? this.template : null;
    const len = template ? template.length : row.length;
    const cells: string[] = [];
    for (let t = 0; t < len; t++) {
      // Cells under an empty column name are left empty.
      if (template && !template[t]) cells[t] = '';
      else cells[t] = quoteCell(this.host.ensureString(row[t] === undefined ? '' : row[t]), this.c.sep);
    }
    return cells.join(this.c.sep);
  }

  private objectRow(msg: Msg, row: any, first: any): string {
    const { sep } = this.c;
    if (!hasTemplate(this.template) && has(msg, 'columns')) this.template = templateOf(msg.columns || '');
    if (hasTemplate(this.template)) {
      return this.template.map((name) => {
        if (!name) return '';
        const value = row[name];
        return quoteCell(this.host.ensureString(value === undefined ? '' : value), sep);
      }).join(sep);
    }
    if (!this.warnedNoTemplate) {
      this.warnedNoTemplate = true;
      this.host.warn('No columns template specified for object -> CSV.');
    }
    this.template = Object.keys(row);
    // Keys come from the first row; nested objects (and null) are left out, not even as empty cells.
    const cells: string[] = [];
    for (const key in first) {
      if (!has(row, key)) continue;
      const cell = row[key];
      if (typeof cell !== 'object') cells.push(quoteCell(cell === undefined ? '' : String(cell), sep));
    }
    return cells.join(sep);
  }

  /** False when the whole message was skipped lines: Node-RED then never calls done. */
  private fromCsv(msg: Msg, text: string, send: SendFn): boolean {
    const c = this.c;
    const position = sequencePosition(msg, c.skip);
    const { parts, last } = position;
    let { first: firstLine, lineCount } = position;
    let cursor = 0;
    if (c.skip > 0 && lineCount < c.skip) {
      // Every CR and every LF counts as a line here, as in Node-RED.
      while (cursor < text.length && firstLine && lineCount < c.skip) {
        if (text[cursor] === '\r' || text[cursor] === '\n') lineCount++;
        cursor++;
      }
      if (cursor >= text.length) return false;
    }
    const breaks = countBreaks(text, cursor);
    // A multi-line message inside a sequence is a document of its own, header included.
    if (parts !== undefined && c.multi === 'mult' && breaks > 1) firstLine = true;
    if (firstLine && c.hdrin === true) {
      try {
        const header = parseRows(text, { separator: c.sep, cursor, firstOnly: true, strict: true });
        this.template = header.rows[0] ?? [];
        cursor = header.cursor;
      } catch (err) {
        this.host.status({ fill: 'red', shape: 'dot', text: 'Malformed columns template.' });
        throw err;
      }
    }
    const { rows } = parseRows(text, { separator: c.sep, cursor });
    // Deliberate difference: Node-RED sizes generated names by the first row, so it drops the
    // trailing values of longer rows; the widest row keeps them.
    const headers = hasTemplate(this.template) ? this.template : generatedHeaders(rows.reduce((w, r) => Math.max(w, r.length), 0));
    const data = rowsToObjects(rows, headers, c);
    const columns = columnsString(headers);
    if (c.multi !== 'one') {
      sendAllRows(this.rowStore, msg, data, data, columns, parts, breaks, send);
      return true;
    }
    sendRows(this.host, msg, data, columns, c, parts !== undefined, last, send);
    return true;
  }
}

export function countBreaks(text: string, from: number): number {
  let n = 0;
  for (let i = from; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 10 || ch === 13) n++;
  }
  return n;
}

/** Multi "one": a message per row; rows of a sequence keep its parts, shifted past skipped and header lines. */
/** Rows kept across a sequence of single-line messages until its last part. */
export interface RowStore {
  rows: Record<string, unknown>[];
}

/**
 * Output as one message of all rows: at once, or for a sequence of single-line messages the rows
 * kept (`keep`) from every part, sent when the last part arrives.
 */
export function sendAllRows(store: RowStore, msg: Msg, rows: Record<string, unknown>[], keep: Record<string, unknown>[], columns: string, parts: any, breaks: number, send: SendFn): void {
  if (parts !== undefined && breaks <= 1) {
    store.rows.push(...keep);
    if (parts.index + 1 !== parts.count) return;
    msg.payload = store.rows;
    store.rows = [];
    delete msg.parts;
  } else msg.payload = rows;
  msg.columns = columns;
  send(msg);
}

export function sendRows(host: CsvHost, msg: Msg, data: Record<string, unknown>[], columns: string, c: CsvConfig, inSequence: boolean, last: boolean, send: SendFn): void {
  for (let row = 0; row < data.length; row++) {
    const m = host.clone(msg);
    m.columns = columns;
    m.payload = data[row];
    if (!inSequence) m.parts = { id: msg._msgid, index: row, count: data.length };
    else {
      m.parts.index -= c.skip;
      m.parts.count -= c.skip;
      if (c.hdrin) {
        m.parts.index -= 1;
        m.parts.count -= 1;
      }
    }
    if (last) m.complete = true;
    send(m);
  }
  if (inSequence && last && data.length === 0) send({ complete: true });
}
