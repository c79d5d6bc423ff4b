import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptsAll } from '../../src/server/lazy-schemas.js';
import { deployHeaders } from '../../src/server/schemas.js';

test('schemas that accept anything are not compiled: empty ones, and documented headers of plain strings', () => {
  assert.equal(acceptsAll({}, 'body'), true);
  assert.equal(acceptsAll({ description: 'any JSON' }, 'body'), true);
  assert.equal(acceptsAll(deployHeaders, 'headers'), true);
  assert.equal(acceptsAll({ type: 'object', properties: {} }, 'headers'), true);
});

test('a schema that can refuse a value is compiled', () => {
  const refusing: [unknown, string][] = [
    // The same plain-string object is no no-op outside headers: a body may be anything.
    [deployHeaders, 'body'],
    [deployHeaders, 'querystring'],
    [{ type: 'object', required: ['x-token'], properties: { 'x-token': { type: 'string' } } }, 'headers'],
    [{ type: 'object', properties: { 'x-mode': { type: 'string', enum: ['a', 'b'] } } }, 'headers'],
    [{ type: 'object', properties: { 'x-size': { type: 'integer' } } }, 'headers'],
    [{ type: 'object', properties: { 'x-id': { type: 'string', maxLength: 10 } } }, 'headers'],
    [{ type: 'object', properties: { 'x-id': { type: 'string' } }, additionalProperties: false }, 'headers'],
    [{ type: 'object' }, 'body'],
    [{ type: 'string' }, 'body'],
    [{ $ref: 'errorBody#' }, 'body'],
    [true, 'body'],
    [null, 'body'],
  ];
  for (const [schema, part] of refusing) assert.equal(acceptsAll(schema, part), false, `${part} ${JSON.stringify(schema)}`);
});
