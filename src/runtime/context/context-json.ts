import { safeStringify } from '../util/encode.js';

/**
 * How Node-RED's localfilesystem store writes a scope: json-stringify-safe with four-space
 * indentation. It is plain JSON (Buffers become `{type, data}`, Dates ISO strings, undefined
 * values vanish); a reference back to an enclosing object is written as the string
 * `[Circular ~]` or `[Circular ~.path.to.it]` instead of failing the whole file.
 */
export function stringifyContext(value: unknown): { json: string; circular: boolean } {
  let circular = false;
  const json = safeStringify(value, undefined, 4, () => {
    circular = true;
  });
  return { json, circular };
}
