/**
 * Text encodings of the file nodes. Node-RED offers iconv-lite's list; here Node's own Buffer
 * encodings work both ways and every WHATWG encoding (Shift_JIS, windows-1252, GBK, …) can be
 * read. "none" means UTF-8 text and raw bytes.
 */
import { StringDecoder } from 'node:string_decoder';

const BUFFER_ENCODINGS = new Map<string, BufferEncoding>([
  ['none', 'utf8'], ['utf8', 'utf8'], ['utf-8', 'utf8'], ['ascii', 'ascii'], ['latin1', 'latin1'], ['binary', 'latin1'],
  ['base64', 'base64'], ['hex', 'hex'], ['ucs2', 'utf16le'], ['ucs-2', 'utf16le'], ['utf16le', 'utf16le'], ['utf-16le', 'utf16le'],
]);

const bufferEncoding = (name: string) => BUFFER_ENCODINGS.get(name.toLowerCase());

export function encodeText(data: string | Buffer, encoding: string): Buffer {
  if (Buffer.isBuffer(data)) return data;
  const enc = bufferEncoding(encoding);
  if (!enc) throw new Error(`unsupported encoding for writing: ${encoding}`);
  return Buffer.from(data, enc);
}

/** An incremental decoder: characters split across chunks come out whole. */
export interface TextChunks {
  write(chunk: Buffer): string;
  end(): string;
}

export function textDecoder(encoding: string): TextChunks {
  const enc = bufferEncoding(encoding);
  if (enc) {
    const decoder = new StringDecoder(enc);
    return { write: (chunk) => decoder.write(chunk), end: () => decoder.end() };
  }
  // Throws a RangeError for an unknown encoding, reported like any read failure.
  const decoder = new TextDecoder(encoding);
  return { write: (chunk) => decoder.decode(chunk, { stream: true }), end: () => decoder.decode() };
}
