import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareObjects, ensureBuffer, ensureString, generateId, normaliseNodeTypeName, parseContextStore,
} from '../../../src/runtime/util/index.js';

describe('compareObjects', () => {
  it('compares deeply', () => {
    assert.equal(compareObjects({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), true);
    assert.equal(compareObjects({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }), false);
    assert.equal(compareObjects([1, 2], [1, 2, 3]), false);
    assert.equal(compareObjects({ a: 1 }, { a: 1, b: 2 }), false);
    assert.equal(compareObjects([1], { 0: 1 }), false);
    assert.equal(compareObjects(null, null), true);
    assert.equal(compareObjects(null, undefined), false);
    assert.equal(compareObjects(1, '1'), false);
    assert.equal(compareObjects('a', 'a'), true);
  });

  it('compares Buffers by bytes', () => {
    assert.equal(compareObjects(Buffer.from('ab'), Buffer.from('ab')), true);
    assert.equal(compareObjects(Buffer.from('ab'), Buffer.from('ac')), false);
    assert.equal(compareObjects(Buffer.from('ab'), { 0: 97, 1: 98 }), false);
  });
});

describe('ensureString / ensureBuffer', () => {
  it('converts like Node-RED', () => {
    assert.equal(ensureString(Buffer.from('hi')), 'hi');
    assert.equal(ensureString({ a: 1 }), '{"a":1}');
    assert.equal(ensureString(null), 'null');
    assert.equal(ensureString(12), '12');
    assert.equal(ensureString(undefined), 'undefined');
    assert.equal(ensureString('s'), 's');
  });

  it('returns the same Buffer and encodes everything else', () => {
    const buf = Buffer.from('x');
    assert.equal(ensureBuffer(buf), buf);
    assert.equal(ensureBuffer({ a: 1 }).toString(), '{"a":1}');
    assert.equal(ensureBuffer(5).toString(), '5');
    assert.equal(ensureBuffer('abc').toString(), 'abc');
    assert.equal(ensureBuffer(true).toString(), 'true');
  });
});

describe('generateId', () => {
  it('gives 16 lowercase hex characters, different each time', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = generateId();
      assert.match(id, /^[0-9a-f]{16}$/);
      ids.add(id);
    }
    assert.equal(ids.size, 2000);
  });
});

describe('normaliseNodeTypeName / parseContextStore', () => {
  it('camel-cases type names', () => {
    assert.equal(normaliseNodeTypeName('a-random node type'), 'aRandomNodeType');
    assert.equal(normaliseNodeTypeName('HTTP in'), 'hTTPIn');
    assert.equal(normaliseNodeTypeName('  jwt  sign '), 'jwtSign');
  });

  it('splits #:(store)::key', () => {
    assert.deepEqual(parseContextStore('#:(file)::foo.bar'), { store: 'file', key: 'foo.bar' });
    assert.deepEqual(parseContextStore('foo'), { key: 'foo' });
    assert.deepEqual(parseContextStore('#:(a b)::foo'), { key: '#:(a b)::foo' });
  });
});
