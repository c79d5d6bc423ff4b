import type { FastifyError, FastifyInstance } from 'fastify';
import type JsoncParser from 'jsonc-parser';
import { lazy } from '../base/lazy.js';
import { RunnelError } from '../base/errors.js';

// Only read when a body fails to parse.
const jsonc = lazy<typeof JsoncParser>('jsonc-parser');

/**
 * The invalid_json error for `text` that JSON.parse refused with `error`, saying where: V8 names
 * the position of some mistakes only ("Unexpected token '}'" has none), so a strict JSON scanner
 * finds the first one, given as line, column and character offset.
 */
export function invalidJson(text: string, error: unknown): RunnelError {
  const reason = error instanceof Error ? error.message : String(error);
  const errors: JsoncParser.ParseError[] = [];
  jsonc().parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const offset = errors[0]?.offset;
  if (offset === undefined) return new RunnelError('invalid_json', `Request body is not valid JSON: ${reason}`);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return new RunnelError('invalid_json', `Request body is not valid JSON at line ${line}, column ${column} (character ${offset}): ${reason}`);
}

/**
 * Fastify's JSON body parser (with its prototype-poisoning checks), whose syntax errors say where
 * the mistake is instead of only "not valid JSON".
 */
export function parseJsonWithPositions(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = raw as string;
    void parse(request, body, (err, value) => {
      if ((err as FastifyError | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        try {
          JSON.parse(body);
        } catch (e) {
          done(invalidJson(body, e), undefined);
          return;
        }
      }
      done(err, value);
    });
  });
}
