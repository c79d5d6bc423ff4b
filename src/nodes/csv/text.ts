/**
 * CSV text as Node-RED 4's RFC 4180 parser reads and writes it, quirks included, so a csv node in
 * "rfc" mode yields the same cells: any of CR, LF or CRLF ends a record (and a line break followed
 * by LF counts once), empty records vanish, a record's empty last field is dropped, and outside
 * strict mode a stray quote inside an unquoted field is kept as text. The quote is always `"`; the
 * separator is one character (a longer one never matches, as in Node-RED).
 */

/** A parsed cell: the text, or null for a field with no characters at all (`""` is a string). */
export type Cell = string | null;

export interface RowsOptions {
  separator: string;
  /** Where to start reading. */
  cursor?: number;
  /** Stop after the first record (a header row). */
  firstOnly?: boolean;
  /** Throw on a stray quote, data after a closing quote or an unclosed quote (templates, headers). */
  strict?: boolean;
}

export interface Rows {
  rows: Cell[][];
  /** Where reading stopped. */
  cursor: number;
}

class CsvParseError extends Error {
  constructor(message: string, readonly cursor: number, name = 'ParseError') {
    super(message);
    this.name = name;
  }
}

const QUOTE = '"';

export function parseRows(text: string, options: RowsOptions): Rows {
  const { separator, firstOnly = false, strict = false } = options;
  const rows: Cell[][] = [];
  let row: Cell[] = [];
  let cell = '';
  let cursor = options.cursor ?? 0;
  // newCell: nothing (not even a quote) read for this field yet; closed: a quoted field just ended.
  let newCell = true;
  let inQuote = false;
  let closed = false;
  const endCell = () => {
    row.push(cell || (newCell ? null : ''));
    cell = '';
  };
  // A record's last field counts only when it has characters, so "1,2," has two fields.
  const endRow = () => {
    if (cell) endCell();
    if (row.length) rows.push(row);
    row = [];
  };
  const n = text.length;
  while (cursor < n) {
    const ch = text[cursor];
    if (inQuote) {
      if (ch !== QUOTE) {
        cell += ch;
        cursor++;
      } else if (text[cursor + 1] === QUOTE) {
        cell += QUOTE;
        cursor += 2;
      } else {
        inQuote = false;
        cursor++;
      }
      newCell = false;
      closed = !inQuote;
      continue;
    }
    if (ch === separator) {
      endCell();
      cursor++;
      newCell = true;
      closed = false;
    } else if (ch === QUOTE) {
      if (newCell) {
        inQuote = true;
        newCell = false;
        closed = false;
        cursor++;
      } else if (strict) {
        throw new CsvParseError('Quote found in the middle of an unquoted field', cursor, 'UnquotedQuoteError');
      } else {
        // A stray quote stays (once, even when doubled) unless it ends the field.
        cursor++;
        const next = text[cursor];
        if (next && next !== '\n' && next !== '\r' && next !== separator) {
          cell += QUOTE;
          if (next === QUOTE) cursor++;
        }
      }
    } else if (ch === '\n' || ch === '\r') {
      endRow();
      cursor += text[cursor + 1] === '\n' ? 2 : 1;
      newCell = true;
      closed = false;
      if (firstOnly) break;
    } else if (closed) {
      if (strict) throw new CsvParseError('Data found after closing quote', cursor, 'DataAfterCloseError');
      // Re-read the closing quote as a stray one, so `"ab"c` reads as `ab"c`.
      cursor--;
      closed = false;
    } else {
      cell += ch;
      newCell = false;
      cursor++;
    }
  }
  if (strict && inQuote) throw new CsvParseError('Missing quote, unclosed cell', cursor);
  endRow();
  return { rows, cursor };
}

export interface ObjectOptions {
  includeNull: boolean;
  includeEmpty: boolean;
  parseNumeric: boolean;
}

/** Leading zeros, explicit plus signs and "-0…" stay text; everything else `+` accepts is a number. */
const KEEP_TEXT = /^ *(\+|-0\d|0\d)/;

/** Rows as objects keyed by `headers` (empty names skip a column); rows with no value left vanish. */
export function rowsToObjects(rows: Cell[][], headers: Cell[], o: ObjectOptions): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const row of rows) {
    const obj: Record<string, unknown> = {};
    let empty = true;
    for (let j = 0; j < headers.length; j++) {
      const name = headers[j];
      if (!name) continue;
      let v: unknown = row[j] ?? null;
      if (v === null) {
        if (!o.includeNull) continue;
      } else if (v === '') {
        if (!o.includeEmpty) continue;
      } else if (o.parseNumeric && !KEEP_TEXT.test(v as string)) {
        const num = +(v as string);
        if (!Number.isNaN(num)) v = num;
      }
      obj[name] = v;
      empty = false;
    }
    if (!empty) out.push(obj);
  }
  return out;
}

/** Names col1..colN for rows that have no header. */
export function generatedHeaders(width: number): string[] {
  return Array.from({ length: width }, (_, i) => `col${i + 1}`);
}

/** One cell as CSV text: quotes doubled, and the cell quoted when it holds a quote, the separator or a line break. */
export function quoteCell(cell: string, separator: string): string {
  const text = cell.includes(QUOTE) ? cell.replace(/"/g, '""') : cell;
  const wrap = cell.includes(QUOTE) || cell.includes(separator) || cell.includes('\r') || cell.includes('\n');
  return wrap ? QUOTE + text + QUOTE : text;
}

/** msg.columns: the non-empty names, quoted as needed, joined by commas. */
export function columnsString(headers: readonly Cell[] | null): string {
  if (!headers) return '';
  const names: string[] = [];
  for (const h of headers) if (h) names.push(quoteCell(h, ','));
  return names.join(',');
}
