/**
 * RFC 4180 CSV text: a parser that honours quoted fields (embedded separators, doubled quotes,
 * line breaks) and a serialiser that quotes exactly the cells that need it. Any of CRLF, LF or CR
 * ends a record.
 */

/** A parsed cell: the text, or null for an unquoted empty field (quoted "" stays a string). */
export type Cell = string | null;

export interface Parsed {
  rows: Cell[][];
  /** A quoted field was still open at the end of the text. */
  unterminated: boolean;
}

const QUOTE = 34;
const CR = 13;
const LF = 10;

export function parseCsv(text: string, sep: string): Parsed {
  const rows: Cell[][] = [];
  let row: Cell[] = [];
  let cell = '';
  let quoted = false;
  let inQuotes = false;
  let pending = false;
  const sepFirst = sep.charCodeAt(0);
  const endCell = () => {
    row.push(cell === '' && !quoted ? null : cell);
    cell = '';
    quoted = false;
  };
  const endRow = () => {
    endCell();
    rows.push(row);
    row = [];
    pending = false;
  };
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (inQuotes) {
      if (c === QUOTE) {
        if (text.charCodeAt(i + 1) === QUOTE) {
          cell += '"';
          i += 2;
          continue;
        }
        inQuotes = false;
        i++;
        continue;
      }
      const close = text.indexOf('"', i);
      const end = close === -1 ? n : close;
      cell += text.slice(i, end);
      i = end;
      continue;
    }
    pending = true;
    if (c === QUOTE) {
      inQuotes = true;
      quoted = true;
      i++;
    } else if (c === sepFirst && text.startsWith(sep, i)) {
      endCell();
      i += sep.length;
    } else if (c === CR || c === LF) {
      endRow();
      i += c === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
    } else {
      cell += text[i];
      i++;
    }
  }
  if (pending || inQuotes) endRow();
  return { rows, unterminated: inQuotes };
}

/** One cell as RFC 4180 text: quoted when it holds a quote, the separator or a line break. */
function formatCell(value: string, sep: string): string {
  if (value.includes('"')) return `"${value.replace(/"/g, '""')}"`;
  if (value.includes(sep) || value.includes('\n') || value.includes('\r')) return `"${value}"`;
  return value;
}

export function formatRow(values: string[], sep: string): string {
  let out = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += sep;
    out += formatCell(values[i], sep);
  }
  return out;
}
