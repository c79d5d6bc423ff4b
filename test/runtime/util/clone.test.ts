import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cloneMessage } from '../../../src/runtime/util/index.js';

class WordArray {
  constructor(public words: number[], public sigBytes: number) {}
  toString() {
    return this.words.join(',');
  }
}

describe('cloneMessage', () => {
  it('returns null and undefined as they are', () => {
    assert.equal(cloneMessage(null), null);
    assert.equal(cloneMessage(undefined), undefined);
  });

  it('deep-copies plain objects and arrays', () => {
    const msg = { payload: { a: [1, { b: 2 }], s: 'x' }, topic: 't' };
    const copy = cloneMessage(msg);
    assert.deepEqual(copy, msg);
    assert.notEqual(copy.payload, msg.payload);
    assert.notEqual(copy.payload.a, msg.payload.a);
    assert.notEqual(copy.payload.a[1], msg.payload.a[1]);
  });

  it('keeps class instances with their prototype', () => {
    const msg = { payload: new WordArray([1, 2], 8) };
    const copy = cloneMessage(msg);
    assert.ok(copy.payload instanceof WordArray);
    assert.notEqual(copy.payload, msg.payload);
    assert.notEqual(copy.payload.words, msg.payload.words);
    assert.equal(copy.payload.toString(), '1,2');
  });

  it('shares msg.req and msg.res by reference and leaves the original intact', () => {
    const req = { headers: { a: 1 }, socket: {} };
    const res = { _res: true };
    const msg = { payload: 1, req, res };
    const copy = cloneMessage(msg);
    assert.equal(copy.req, req);
    assert.equal(copy.res, res);
    assert.equal(msg.req, req);
    assert.equal(msg.res, res);
  });

  it('keeps circular and shared references in shape', () => {
    const shared = { v: 1 };
    const msg: Record<string, unknown> = { a: shared, b: shared };
    msg.self = msg;
    const copy = cloneMessage(msg);
    assert.equal(copy.self, copy);
    assert.equal(copy.a, copy.b);
    assert.notEqual(copy.a, shared);
  });

  it('copies Dates, RegExps, Maps, Sets and typed arrays', () => {
    const date = new Date(1_700_000_000_000);
    const re = /ab+c/gi;
    re.lastIndex = 3;
    const inner = { k: 1 };
    const msg = {
      date, re,
      map: new Map<string, unknown>([['x', inner]]),
      set: new Set([inner]),
      u16: new Uint16Array([1, 2, 3]),
      ab: new Uint8Array([9, 8]).buffer,
    };
    const copy = cloneMessage(msg);
    assert.ok(copy.date instanceof Date);
    assert.notEqual(copy.date, date);
    assert.equal(copy.date.getTime(), date.getTime());
    assert.notEqual(copy.re, re);
    assert.equal(copy.re.source, 'ab+c');
    assert.equal(copy.re.flags, 'gi');
    assert.equal(copy.re.lastIndex, 3);
    const mapped = copy.map.get('x');
    assert.deepEqual(mapped, inner);
    assert.notEqual(mapped, inner);
    assert.equal([...copy.set][0], mapped, 'the same source object clones to the same copy');
    assert.deepEqual(Array.from(copy.u16), [1, 2, 3]);
    copy.u16[0] = 99;
    assert.equal(msg.u16[0], 1);
    assert.notEqual(copy.ab, msg.ab);
    assert.deepEqual(Array.from(new Uint8Array(copy.ab)), [9, 8]);
  });

  it('gives a new Buffer over the same bytes, as lodash cloneDeep does', () => {
    const buf = Buffer.from('hello');
    const copy = cloneMessage({ payload: buf });
    assert.ok(Buffer.isBuffer(copy.payload));
    assert.notEqual(copy.payload, buf);
    assert.equal(copy.payload.toString(), 'hello');
  });

  it('keeps functions, Errors and Promises by reference', () => {
    const fn = () => 1;
    const err = new Error('x');
    const promise = Promise.resolve(1);
    const copy = cloneMessage({ fn, err, promise });
    assert.equal(copy.fn, fn);
    assert.equal(copy.err, err);
    assert.equal(copy.promise, promise);
  });

  it('treats a JSON __proto__ key as data', () => {
    const msg = JSON.parse('{"payload":{"__proto__":{"polluted":true}}}') as { payload: Record<string, unknown> };
    const copy = cloneMessage(msg);
    assert.equal(Object.getPrototypeOf(copy.payload), Object.prototype);
    assert.deepEqual(Object.keys(copy.payload), ['__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('clones a message that is itself a class instance', () => {
    const msg = new WordArray([3], 4);
    const copy = cloneMessage(msg);
    assert.ok(copy instanceof WordArray);
    assert.notEqual(copy, msg);
    assert.deepEqual(copy.words, [3]);
  });
});
