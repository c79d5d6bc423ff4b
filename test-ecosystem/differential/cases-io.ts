/** http request, template sections and inject errors: behaviours the I/O node audit fixed. */
import type { DiffCase } from './harness.js';

/** An http request node calling back into the same system, at a path nothing serves. */
const selfRequest = (extra: Record<string, unknown>) => ({
  method: 'GET', ret: 'txt', paytoqs: 'ignore', url: 'http://{{req.headers.host}}/diff-io-missing', tls: '', persist: false,
  proxy: '', insecureHTTPParser: false, authType: '', senderr: false, headers: [], ...extra,
});

const summary = (name: string) => `msg.${name} = { statusCode: msg.statusCode, retry: msg.retry, type: typeof msg.payload };
delete msg.headers; delete msg.responseUrl; delete msg.redirectList; delete msg.payload;
return msg;`;

export const ioCases: DiffCase[] = [
  {
    name: 'io-http-request-404', about: 'a 404 answer is an ordinary output, with senderr set too; msg.retry is 0',
    build: (k) => [
      k.node('start', 'http request', selfRequest({}), 'first'),
      k.fn('first', summary('first'), 'again'),
      k.node('again', 'http request', selfRequest({ senderr: true }), 'second'),
      k.fn('second', summary('second'), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'io-template-json-section', about: 'JSON output escapes top-level values only, not those inside sections',
    build: (k) => [k.node('start', 'template', {
      field: 'payload', fieldType: 'msg', format: 'handlebars', syntax: 'mustache', output: 'json',
      template: '{"top": "{{s}}", "inner": {{#obj}}"{{s}}"{{/obj}}}',
    }, 'out')],
    requests: [{ msg: { s: 'a\\b', obj: { s: 'a\\b' } } }],
  },
  {
    name: 'io-inject-errors', about: 'invalid JSON and a failing JSONata value fail the injection; catch gets the joined texts',
    build: (k) => [
      k.node('start', 'inject', {
        props: [{ p: 'payload', v: 'not json', vt: 'json' }, { p: 'empty', v: '', vt: 'jsonata' }, { p: 'call', v: '$nope()', vt: 'jsonata' }],
        repeat: '', crontab: '', once: false, onceDelay: 0.1, topic: '',
      }, 'out'),
      k.node('c', 'catch', { scope: [k.id('start')], uncaught: false }, 'out'),
    ],
    requests: [{ msg: { payload: 'orig' } }],
  },
];
