/** The escapes the split and join editors let users type into a separator field. */
const ESCAPES: [RegExp, string][] = [
  [/\\n/g, '\n'],
  [/\\r/g, '\r'],
  [/\\t/g, '\t'],
  [/\\e/g, 'e'],
  [/\\f/g, '\f'],
  [/\\0/g, '\0'],
];

export function unescapeSeparator(text: string): string {
  let out = text;
  for (const [re, ch] of ESCAPES) out = out.replace(re, ch);
  return out;
}

/** A `bin` separator: a JSON array of byte values. */
export function parseByteArray(text: string): { buffer: Buffer; bytes: number[] } {
  const bytes: unknown = JSON.parse(text);
  if (!Array.isArray(bytes)) throw new Error('not an array');
  return { buffer: Buffer.from(bytes as number[]), bytes: bytes as number[] };
}
