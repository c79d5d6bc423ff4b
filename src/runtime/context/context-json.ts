/**
 * How Node-RED's localfilesystem store writes a scope: json-stringify-safe with four-space
 * indentation. It is plain JSON (Buffers become `{type, data}`, Dates ISO strings, undefined
 * values vanish); a reference back to an enclosing object is written as the string
 * `[Circular ~]` or `[Circular ~.path.to.it]` instead of failing the whole file.
 */
export function stringifyContext(value: unknown): { json: string; circular: boolean } {
  const stack: unknown[] = [];
  const keys: string[] = [];
  let circular = false;
  const json = JSON.stringify(
    value,
    function (this: unknown, key: string, v: unknown) {
      if (stack.length === 0) {
        stack.push(v);
        return v;
      }
      const pos = stack.indexOf(this);
      if (pos !== -1) {
        stack.splice(pos + 1);
        keys.splice(pos, Infinity, key);
      } else {
        stack.push(this);
        keys.push(key);
      }
      const seen = stack.indexOf(v);
      if (seen === -1) return v;
      circular = true;
      return seen === 0 ? '[Circular ~]' : `[Circular ~.${keys.slice(0, seen).join('.')}]`;
    },
    4,
  );
  return { json, circular };
}
