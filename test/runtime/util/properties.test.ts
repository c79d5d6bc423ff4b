import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  getMessageProperty, getObjectProperty, setMessageProperty, setObjectProperty,
} from '../../../src/runtime/util/index.js';

describe('getMessageProperty', () => {
  it('reads nested values with or without the msg. prefix', () => {
    const msg = { payload: { a: [10, { b: 'x' }] }, topic: 't' };
    assert.equal(getMessageProperty(msg, 'msg.topic'), 't');
    assert.equal(getMessageProperty(msg, 'topic'), 't');
    assert.equal(getMessageProperty(msg, 'payload.a[1].b'), 'x');
    assert.equal(getMessageProperty(msg, 'payload["a"][0]'), 10);
  });

  it('returns undefined for a missing leaf', () => {
    assert.equal(getMessageProperty({}, 'car'), undefined);
    assert.equal(getMessageProperty({ pet: { type: 'cat' } }, 'pet.name'), undefined);
  });

  it('throws a TypeError when a parent is missing (moment catches it)', () => {
    assert.throws(() => getMessageProperty({}, 'car.type'), TypeError);
    assert.throws(() => getMessageProperty({ a: null }, 'msg.a.b'), TypeError);
  });

  it('resolves cross-references against the message', () => {
    const msg = { key: 'b', data: { b: 42 } };
    assert.equal(getMessageProperty(msg, 'data[msg.key]'), 42);
  });

  it('getObjectProperty does not strip msg.', () => {
    assert.equal(getObjectProperty({ msg: { a: 1 } }, 'msg.a'), 1);
  });
});

describe('setMessageProperty', () => {
  it('sets with the msg. prefix stripped and returns true', () => {
    const msg: Record<string, unknown> = {};
    assert.equal(setMessageProperty(msg, 'msg.payload', 5), true);
    assert.deepEqual(msg, { payload: 5 });
  });

  it('creates missing parents: objects, or arrays before a numeric key', () => {
    const msg: Record<string, unknown> = {};
    assert.equal(setMessageProperty(msg, 'a.b[2].c', 'v'), true);
    // Holes, not undefined values: the array grows by index assignment, as in Node-RED.
    assert.deepEqual(msg, { a: { b: [, , { c: 'v' }] } });
    const msg2: Record<string, unknown> = {};
    setMessageProperty(msg2, 'x[0][1]', 1);
    assert.deepEqual(msg2, { x: [[, 1]] });
  });

  it('does not create parents when createMissing is false', () => {
    const msg: Record<string, unknown> = {};
    assert.equal(setMessageProperty(msg, 'a.b', 1, false), false);
    assert.deepEqual(msg, {});
  });

  it('returns false when it cannot descend into a non-object', () => {
    const msg: Record<string, unknown> = { a: 'text', n: null };
    assert.equal(setMessageProperty(msg, 'a.b', 1), false);
    assert.equal(setMessageProperty(msg, 'n.b', 1), false);
    assert.deepEqual(msg, { a: 'text', n: null });
  });

  it('deletes on undefined and splices array indices', () => {
    const msg: Record<string, unknown> = { a: { b: 1, c: 2 }, arr: [1, 2, 3] };
    assert.equal(setMessageProperty(msg, 'a.b', undefined), true);
    assert.equal(setMessageProperty(msg, 'arr[1]', undefined), true);
    assert.deepEqual(msg, { a: { c: 2 }, arr: [1, 3] });
  });

  it('undefined on a missing parent creates nothing', () => {
    const msg: Record<string, unknown> = {};
    assert.equal(setMessageProperty(msg, 'a.b', undefined), false);
    assert.deepEqual(msg, {});
  });

  it('writes through cross-references and throws INVALID_EXPR on bad syntax', () => {
    const msg: Record<string, unknown> = { k: 'dyn', store: {} };
    setMessageProperty(msg, 'store[msg.k]', 1);
    assert.deepEqual(msg.store, { dyn: 1 });
    assert.throws(() => setMessageProperty(msg, 'a..b', 1), { code: 'INVALID_EXPR' });
  });

  it('setObjectProperty keeps a leading msg.', () => {
    const obj: Record<string, unknown> = {};
    setObjectProperty(obj, 'msg.a', 1);
    assert.deepEqual(obj, { msg: { a: 1 } });
  });
});
