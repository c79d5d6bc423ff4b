/**
 * Reading and writing message properties by expression, with Node-RED's edge cases kept:
 * a missing leaf reads as undefined but a missing parent throws (moment relies on the throw),
 * writes create missing parents only when asked, and `undefined` deletes.
 */
import { parseMessagePath, parsePath, readPath, type PathPart } from './expression.js';

type Indexable = Record<string | number, unknown>;

const hasOwn = Object.prototype.hasOwnProperty;

export function getObjectProperty(obj: unknown, expr: string): unknown {
  return readPath(obj, parsePath(expr, obj));
}

/** Like getObjectProperty, with a leading `msg.` optional. */
export function getMessageProperty(msg: unknown, expr: string): unknown {
  return readPath(msg, parseMessagePath(expr, msg));
}

/** Like setObjectProperty, with a leading `msg.` optional. */
export function setMessageProperty(msg: unknown, expr: string, value: unknown, createMissing?: boolean): boolean {
  return writePath(msg, parseMessagePath(expr, msg), value, createMissing);
}

/** Returns false when the path runs into a value that cannot hold properties. */
export function setObjectProperty(obj: unknown, expr: string, value: unknown, createMissing?: boolean): boolean {
  return writePath(obj, parsePath(expr, obj), value, createMissing);
}

function writePath(obj: unknown, parts: readonly PathPart[], value: unknown, createMissing: boolean | undefined): boolean {
  const create = createMissing ?? value !== undefined;
  const last = parts.length - 1;
  let target = obj as Indexable;
  for (let i = 0; i < last; i++) {
    const key = parts[i] as string | number;
    if (typeof target !== 'object' && typeof target !== 'function') return false;
    if (typeof key === 'number' && Array.isArray(target)) {
      if (target[key] === undefined) {
        if (!create) return false;
        target[key] = emptyContainerFor(parts[i + 1]);
      }
    } else if (hasOwn.call(target, key)) {
      const child = target[key];
      if (child === null || (typeof child !== 'object' && typeof child !== 'function')) return false;
    } else {
      if (!create) return false;
      target[key] = emptyContainerFor(parts[i + 1]);
    }
    target = target[key] as Indexable;
  }
  const key = parts[last] as string | number;
  if (value === undefined) {
    if (typeof key === 'number' && Array.isArray(target)) target.splice(key, 1);
    else delete target[key];
    return true;
  }
  if (typeof target !== 'object' || target === null) return false;
  target[key] = value;
  return true;
}

/** A numeric next key means an array index, so the missing parent becomes an array. */
function emptyContainerFor(next: PathPart): Indexable {
  return (typeof next === 'string' ? {} : []) as Indexable;
}
