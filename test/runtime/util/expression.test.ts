import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalisePropertyExpression } from '../../../src/runtime/util/index.js';

function invalid(expr: string, message: string, msg?: unknown) {
  assert.throws(() => normalisePropertyExpression(expr, msg), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'INVALID_EXPR');
    assert.equal(err.message, message);
    return true;
  });
}

describe('normalisePropertyExpression', () => {
  it('splits dotted and bracketed paths with Node-RED part types', () => {
    assert.deepEqual(normalisePropertyExpression('a.b[0]["c d"][\'e\']'), ['a', 'b', 0, 'c d', 'e']);
    assert.deepEqual(normalisePropertyExpression('a'), ['a']);
    assert.deepEqual(normalisePropertyExpression('a.0.b'), ['a', 0, 'b']);
    // The last dotted segment and text before a bracket stay strings, as in Node-RED.
    assert.deepEqual(normalisePropertyExpression('a.0'), ['a', '0']);
    assert.deepEqual(normalisePropertyExpression('a.1[2]'), ['a', '1', 2]);
    assert.deepEqual(normalisePropertyExpression('$a._b'), ['$a', '_b']);
    assert.deepEqual(normalisePropertyExpression('a["b.c"].d'), ['a', 'b.c', 'd']);
  });

  it('returns a fresh array each call even though parses are cached', () => {
    const first = normalisePropertyExpression('x.y');
    first.push('mutated');
    assert.deepEqual(normalisePropertyExpression('x.y'), ['x', 'y']);
  });

  it('resolves [msg.x] cross-references against msg', () => {
    const msg = { topic: 'b', idx: 1, inner: { k: 'c' } };
    assert.deepEqual(normalisePropertyExpression('a[msg.topic]', msg), ['a', 'b']);
    assert.deepEqual(normalisePropertyExpression('a[msg.idx].x', msg), ['a', 1, 'x']);
    assert.deepEqual(normalisePropertyExpression('a[msg.inner[msg.topic]]', { ...msg, inner: { b: 'deep' } }), ['a', 'deep']);
    assert.deepEqual(normalisePropertyExpression('a[msg.inner.k]', msg), ['a', 'c']);
  });

  it('keeps cross-references as nested paths without msg', () => {
    assert.deepEqual(normalisePropertyExpression('a[msg.topic].b'), ['a', ['msg', 'topic'], 'b']);
  });

  it('reports an undefined cross-reference', () => {
    invalid('a[msg.missing]', 'Invalid expression started at position 2', { topic: 'x' });
    invalid('a[msg.topic', "Invalid property expression: unmatched '[' at position 1", { topic: 'x' });
  });

  it('renders the canonical string form', () => {
    assert.equal(normalisePropertyExpression('a.b[0]', undefined, true), 'a["b"][0]');
    assert.equal(normalisePropertyExpression('a[\'say "hi"\']', undefined, true), 'a[\'say "hi"\']');
    assert.equal(normalisePropertyExpression('a[msg.t]', { t: 'q' }, true), 'a["q"]');
  });

  it('rejects malformed expressions with Node-RED messages', () => {
    invalid('', 'Invalid property expression: zero-length');
    invalid('.a', 'Invalid property expression: unexpected . at position 0');
    invalid('a.', 'Invalid property expression: unterminated expression');
    invalid('a..b', 'Invalid property expression: unexpected . at position 2');
    invalid('a.-b', 'Invalid property expression: unexpected - at position 2');
    invalid('[0]', 'Invalid property expression: unexpected [ at position 0');
    invalid('a[', 'Invalid property expression: unterminated expression');
    invalid('a[b]', 'Invalid property expression: unexpected b at position 2');
    invalid('a[0', 'Invalid property expression: unterminated expression');
    invalid('a]', 'Invalid property expression: unexpected ] at position 1');
    invalid('a[1a]', 'Invalid property expression: unexpected array expression at position 2');
    invalid('a b', "Invalid property expression: unexpected ' ' at position 1");
    invalid('a[""]', 'Invalid property expression: zero-length string at position 3');
    invalid('a["b"c]', 'Invalid property expression: unexpected array expression at position 3');
    invalid('"a"b', 'Invalid property expression: unexpected b expression at position 3');
    invalid('a"b"', 'Invalid property expression: unexpected " at position 1');
    invalid('a["b', 'Invalid property expression: unterminated expression');
  });
});
