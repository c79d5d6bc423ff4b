/** Value comparison and conversion helpers of RED.util, with Node-RED's exact coercions. */

/** Deep equality as rbe and friends expect: arrays element-wise, Buffers by bytes, objects by own keys. */
export function compareObjects(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a == null || b == null) return false;
  const aArray = Array.isArray(a);
  if (aArray !== Array.isArray(b)) return false;
  if (aArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!compareObjects(x[i], y[i])) return false;
    return true;
  }
  const aBuffer = Buffer.isBuffer(a);
  if (aBuffer !== Buffer.isBuffer(b)) return false;
  if (aBuffer) return (a as Buffer).equals(b as Buffer);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const key of keys) if (!compareObjects(x[key], y[key])) return false;
  return true;
}

export function ensureString(o: unknown): string {
  if (Buffer.isBuffer(o)) return o.toString();
  if (typeof o === 'object') return JSON.stringify(o);
  if (typeof o === 'string') return o;
  return String(o);
}

export function ensureBuffer(o: unknown): Buffer {
  if (Buffer.isBuffer(o)) return o;
  if (typeof o === 'object') return Buffer.from(JSON.stringify(o));
  return Buffer.from(typeof o === 'string' ? o : String(o));
}

/** Camel case for settings names: `a-random node type` becomes `aRandomNodeType`. */
export function normaliseNodeTypeName(name: string): string {
  const words = name.replace(/[^a-zA-Z0-9]/g, ' ').trim().replace(/ +/g, ' ');
  const joined = words.replace(/ ./g, (s) => s.charAt(1).toUpperCase());
  return joined.charAt(0).toLowerCase() + joined.slice(1);
}

/** `#:(store)::key`, the TypedInput form that names a context store. */
export function parseContextStore(key: string): { store?: string; key: string } {
  const m = /^#:\((\S+?)\)::(.*)$/.exec(key);
  return m ? { store: m[1], key: m[2] } : { key };
}
