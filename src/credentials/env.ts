/**
 * `${NAME}` substitution in credential values, as Node-RED's createNode does it (mapEnvVarProperties):
 * only a string that is *entirely* `${NAME}` (or the old `$(NAME)`) is replaced, at any depth of
 * arrays and objects. A name that resolves to undefined or "" leaves the string as it was.
 */

const WHOLE_VAR = /^\$\{(\S+)\}$|^\$\((\S+)\)$/;

/** Returns a substituted deep copy; `lookup` resolves a name (env of the flow, then process.env). */
export function substituteEnv<T>(value: T, lookup: (name: string) => unknown): T {
  return substitute(value, lookup) as T;
}

function substitute(value: unknown, lookup: (name: string) => unknown): unknown {
  if (typeof value === 'string') {
    const m = WHOLE_VAR.exec(value);
    if (m === null) return value;
    const resolved = lookup((m[1] ?? m[2]) as string);
    return resolved === undefined || resolved === '' ? value : resolved;
  }
  if (Buffer.isBuffer(value)) return Buffer.from(value);
  if (Array.isArray(value)) return value.map((v) => substitute(v, lookup));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substitute(v, lookup);
    return out;
  }
  return value;
}
