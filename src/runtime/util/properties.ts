/**
 * Reading and writing message properties by expression, with Node-RED's edge cases kept:
 * a missing leaf reads as undefined but a missing parent throws (moment relies on the throw),
 * writes create missing parents only when asked, and `undefined` deletes.
 */
import { parsePath, readPath, type PathPart } from './expression.js';

type Indexable = Record<string | number, unknown>;

const hasOwn = Object.prototype.hasOwnProperty;

/** `msg.` is optional in message expressions. */
function stripMsg(expr: string): string {
  return expr.startsWith('msg.') ? expr.substring(4) : expr;
}

export function getObjectProperty(obj: unknown, expr: string): unknown {
  return readPath(obj, parsePath(expr, obj));
}

export function getMessageProperty(msg: unknown, expr: string): unknown {
  return getObjectProperty(msg, stripMsg(expr));
}

export function setMessageProperty(msg: unknown, expr: string, value: unknown, createMissing?: boolean): boolean {
  return setObjectProperty(msg, stripMsg(expr), value, createMissing);
}

/** Returns false when the path runs into a value that cannot hold properties. */
export function setObjectProperty(obj: unknown, expr: string, value: unknown, createMissing?: boolean): boolean {
  const create = createMissing ?? value !== undefined;
  const parts = parsePath(expr, obj);
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
