import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeObject } from '../../../src/runtime/util/index.js';

const encode = (value: unknown, maxLength?: number) =>
  encodeObject({ id: 'n1', msg: value }, maxLength === undefined ? undefined : { maxLength });

describe('encodeObject', () => {
  it('encodes primitives with their format', () => {
    assert.deepEqual(encode('hello'), { id: 'n1', msg: 'hello', format: 'string[5]' });
    assert.deepEqual(encode(42), { id: 'n1', msg: '42', format: 'number' });
    assert.deepEqual(encode(true), { id: 'n1', msg: 'true', format: 'boolean' });
    assert.deepEqual(encode(null), { id: 'n1', msg: '(undefined)', format: 'null' });
    assert.deepEqual(encode(undefined), { id: 'n1', msg: '(undefined)', format: 'undefined' });
    assert.deepEqual(encode(() => 1), { id: 'n1', msg: '[function]', format: 'function' });
    assert.deepEqual(encode(10n), { id: 'n1', msg: { __enc__: true, type: 'bigint', data: '10' }, format: 'bigint' });
  });

  it('truncates long strings and buffers', () => {
    assert.deepEqual(encode('abcdef', 3), { id: 'n1', msg: 'abc...', format: 'string[6]' });
    assert.deepEqual(encode(Buffer.from([1, 2, 255]), 4), { id: 'n1', msg: '0102', format: 'buffer[3]' });
  });

  it('encodes objects as JSON with markers for non-JSON values', () => {
    const out = encode({ a: 1, f: () => 0, n: NaN, u: undefined, b: Buffer.from([1]), s: 'x'.repeat(1001) });
    assert.equal(out.format, 'Object');
    assert.deepEqual(JSON.parse(out.msg as string), {
      a: 1,
      f: { __enc__: true, type: 'function' },
      n: { __enc__: true, type: 'number', data: 'NaN' },
      u: { __enc__: true, type: 'undefined' },
      b: { type: 'Buffer', data: [1], __enc__: true, length: 1 },
      s: 'x'.repeat(1000) + '...',
    });
  });

  it('encodes arrays, long arrays, Maps, Sets and RegExps', () => {
    assert.deepEqual(encode([1, 2]), { id: 'n1', msg: '[1,2]', format: 'array[2]' });
    const long = encode([1, 2, 3, 4, 5, 6, 7], 6);
    assert.equal(long.format, 'array[7]');
    assert.deepEqual(JSON.parse(long.msg as string), { __enc__: true, type: 'array', data: [1, 2, 3, 4, 5, 6], length: 7 });
    const set = encode(new Set([1, 2]));
    assert.equal(set.format, 'set[2]');
    assert.deepEqual(JSON.parse(set.msg as string), { __enc__: true, type: 'set', data: [1, 2], length: 2 });
    const map = encode(new Map([['k', 1]]));
    assert.equal(map.format, 'map');
    assert.deepEqual(JSON.parse(map.msg as string), { __enc__: true, type: 'map', data: { k: 1 }, length: 1 });
    assert.deepEqual(encode(/a+/g), { id: 'n1', msg: '/a+/g', format: 'regexp' });
  });

  it('applies the length limit to every string, markers included, as Node-RED does', () => {
    assert.equal(encode({ f: () => 0 }, 3).msg, '{"f":{"__enc__":true,"type":"fun..."}}');
  });

  it('encodes errors and marks circular references', () => {
    assert.deepEqual(encode(new TypeError('bad')), { id: 'n1', msg: '{"name":"TypeError","message":"bad"}', format: 'error' });
    const obj: Record<string, unknown> = { a: { b: {} } };
    (obj.a as Record<string, Record<string, unknown>>).b.up = obj.a;
    obj.self = obj;
    assert.deepEqual(JSON.parse(encode(obj).msg as string), { a: { b: { up: '[Circular ~.a]' } }, self: '[Circular ~]' });
  });

  it('shows other class instances with their constructor name and toString', () => {
    class Thing {
      toString() {
        return 'a thing';
      }
    }
    assert.deepEqual(encode(new Thing()), { id: 'n1', msg: 'a thing', format: 'Thing' });
  });
});
