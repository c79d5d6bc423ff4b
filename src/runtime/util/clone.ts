/**
 * cloneMessage with lodash `cloneDeep` semantics, which Node-RED uses and modules rely on:
 * prototypes survive (crypto-js passes WordArray instances between nodes), shared and circular
 * references keep their shape, Errors, functions, Promises and WeakMaps stay by reference, and a
 * Buffer becomes a new Buffer over the same memory (lodash clones Buffers with `slice()`).
 * Plain objects and arrays, which are nearly all message content, take a fast path.
 */
type Indexable = Record<PropertyKey, unknown>;

const objectToString = Object.prototype.toString;
const getPrototypeOf = Object.getPrototypeOf;
const ObjectProto = Object.prototype;
const ArrayProto = Array.prototype;

export function cloneMessage<T>(msg: T): T {
  if (msg === null || typeof msg !== 'object') return msg;
  const seen = new Map<object, unknown>();
  const source = msg as unknown as Indexable;
  if (Array.isArray(source) || !isCloneableObject(source)) return cloneValue(source, seen) as T;
  // msg.req / msg.res are live HTTP objects: share them and never walk into them.
  const out = (getPrototypeOf(source) === ObjectProto ? {} : Object.create(getPrototypeOf(source))) as Indexable;
  seen.set(source, out);
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (key === 'req' || key === 'res') {
      // Node-RED drops a falsy req/res from the copy rather than cloning it.
      if (value) out[key] = value;
    } else {
      assign(out, key, cloneValue(value, seen));
    }
  }
  copySymbols(source, out, seen);
  return out as T;
}

/** A deep clone of any value with the same rules as cloneMessage, without the req/res exception. */
export function cloneDeep<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  return cloneValue(value, new Map()) as T;
}

function cloneValue(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) return cloneArray(value, seen);
  const proto = getPrototypeOf(value);
  if (proto === ObjectProto || proto === null) {
    const out: Indexable = proto === null ? Object.create(null) : {};
    seen.set(value, out);
    const src = value as Indexable;
    for (const key in src) assign(out, key, cloneValue(src[key], seen));
    return out;
  }
  return cloneSpecial(value, proto, seen);
}

function cloneArray(value: unknown[], seen: Map<object, unknown>): unknown[] {
  const length = value.length;
  const out = new Array<unknown>(length);
  if (getPrototypeOf(value) !== ArrayProto) Object.setPrototypeOf(out, getPrototypeOf(value));
  seen.set(value, out);
  for (let i = 0; i < length; i++) out[i] = cloneValue(value[i], seen);
  return out;
}

function cloneSpecial(value: object, proto: object, seen: Map<object, unknown>): unknown {
  if (Buffer.isBuffer(value)) return remember(seen, value, value.subarray());
  if (ArrayBuffer.isView(value)) return remember(seen, value, cloneView(value));
  if (value instanceof Date) return remember(seen, value, new (value.constructor as DateConstructor)(value.getTime()));
  if (value instanceof RegExp) {
    const re = new (value.constructor as RegExpConstructor)(value.source, value.flags);
    re.lastIndex = value.lastIndex;
    return remember(seen, value, re);
  }
  if (value instanceof Map) {
    const out = new (value.constructor as MapConstructor)();
    seen.set(value, out);
    value.forEach((v, k) => out.set(k, cloneValue(v, seen)));
    return out;
  }
  if (value instanceof Set) {
    const out = new (value.constructor as SetConstructor)();
    seen.set(value, out);
    value.forEach((v) => out.add(cloneValue(v, seen)));
    return out;
  }
  if (value instanceof ArrayBuffer) return remember(seen, value, value.slice(0));
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return remember(seen, value, Object(value.valueOf()));
  }
  if (!isCloneableObject(value)) return value;
  const out = Object.create(proto) as Indexable;
  seen.set(value, out);
  const src = value as Indexable;
  for (const key of Object.keys(src)) assign(out, key, cloneValue(src[key], seen));
  copySymbols(src, out, seen);
  return out;
}

/** Class instances and arguments objects are cloned; Errors, Promises, WeakMaps and the like are not. */
function isCloneableObject(value: object): boolean {
  const tag = objectToString.call(value);
  return tag === '[object Object]' || tag === '[object Arguments]';
}

function cloneView(view: ArrayBufferView): ArrayBufferView {
  const buffer = (view.buffer as ArrayBuffer).slice(0);
  if (view instanceof DataView) return new DataView(buffer, view.byteOffset, view.byteLength);
  const Ctor = view.constructor as new (b: ArrayBuffer, offset: number, length: number) => ArrayBufferView;
  return new Ctor(buffer, view.byteOffset, (view as Uint8Array).length);
}

function remember<T>(seen: Map<object, unknown>, source: object, copy: T): T {
  seen.set(source, copy);
  return copy;
}

function copySymbols(src: Indexable, out: Indexable, seen: Map<object, unknown>): void {
  for (const sym of Object.getOwnPropertySymbols(src)) {
    if (Object.prototype.propertyIsEnumerable.call(src, sym)) out[sym] = cloneValue(src[sym], seen);
  }
}

/** A JSON-parsed `__proto__` key is data, not the prototype: define it rather than assign it. */
function assign(out: Indexable, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
