/**
 * http in with `upload` (multipart parsed into msg.payload fields and msg.req.files) and with
 * `skipBodyParsing` (the body as raw bytes). The case plumbing's own `http in` has neither
 * option, so these cases set it to GET and put a POST `http in` of their own on the same path.
 */
import type { DiffCase, DiffRequest, Kit } from './harness.js';

const BOUNDARY = 'diffBoundary7MA4YWxk';
const FORM = `multipart/form-data; boundary=${BOUNDARY}`;

/** One part: its header lines and its content (strings are sent as UTF-8). */
type Part = [headers: string[], content: string];

function multipart(parts: Part[]): string {
  const body = parts.map(([headers, content]) => `--${BOUNDARY}\r\n${headers.join('\r\n')}\r\n\r\n${content}\r\n`).join('');
  return `${body}--${BOUNDARY}--\r\n`;
}

const field = (name: string, value: string): Part => [[`Content-Disposition: form-data; name="${name}"`], value];
const file = (name: string, filename: string, type: string | undefined, content: string): Part => [
  [`Content-Disposition: form-data; name="${name}"; filename="${filename}"`, ...(type ? [`Content-Type: ${type}`] : [])],
  content,
];

const post = (body: string, contentType: string): DiffRequest => ({ method: 'POST', body, contentType });

/** What the flow received, in a form both systems can answer as JSON. */
const DESCRIBE = `const req = msg.req;
const p = msg.payload;
msg.kind = Buffer.isBuffer(p) ? 'buffer' : p === null ? 'null' : typeof p;
msg.nullProto = p !== null && typeof p === 'object' && !Buffer.isBuffer(p) ? Object.getPrototypeOf(p) === null : 'n/a';
if (Buffer.isBuffer(p)) msg.payload = p.toString('latin1');
msg.bodyIsPayload = req.body === msg.payload || req.body === p;
msg.rawBody = typeof req.rawBody;
msg.files = req.files === undefined ? 'none' : req.files.map((f) => ({
  keys: Object.keys(f), fieldname: f.fieldname, originalname: f.originalname, encoding: f.encoding,
  mimetype: f.mimetype, size: f.size, isBuffer: Buffer.isBuffer(f.buffer), content: f.buffer.toString('latin1'),
}));
return msg;`;

/** The case's own POST `http in`, with the options under test, answering through `start`. */
function ownHttpIn(k: Kit, options: Record<string, unknown>) {
  return [
    k.node('in', 'http in', { url: `/diff/${k.name}`, method: 'post', upload: false, skipBodyParsing: false, swaggerDoc: '', ...options }, 'start'),
    k.fn('start', DESCRIBE, 'out'),
  ];
}

const MIXED = multipart([
  field('name', 'Ada'),
  file('doc', 'notes.txt', 'text/plain', 'line one\nline two'),
  field('user[city]', 'London'),
  field('user[tags][]', 'a'),
  field('user[tags][]', 'b'),
  field('dup', '1'),
  field('dup', '2'),
  field('list[0]', 'x'),
  field('list[1]', 'y'),
  file('doc', 'data.bin', 'application/octet-stream', '\u00ff\u0000\u0001'),
]);

const NAMES = multipart([
  file('f', 'C:\\Users\\ada\\report.csv', 'text/csv', 'a,b'),
  file('g', 'dir/sub/photo.png', 'image/png', 'png'),
  file('h', 'qu%22ote.txt', undefined, 'no type'),
  file('größe', 'résumé.txt', 'text/plain; charset=utf-8', 'ü'),
  field('naïve', 'café'),
  [['Content-Disposition: form-data; name="t"', 'Content-Type: text/plain; charset=utf-8'], 'typed'],
]);

const SKIPPED = multipart([
  file('empty', '', 'application/octet-stream', ''),
  [['Content-Disposition: form-data; name="anon"', 'Content-Type: application/octet-stream'], 'bytes'],
  field('kept', 'yes'),
  file('zero', 'zero.txt', 'text/plain', ''),
]);

/** Node-RED's multer passes the parse error to the node's error handler, a bare 500. */
function malformed(name: string, what: string, request: DiffRequest, reason: string): DiffCase {
  return {
    name, about: `upload: ${what} fails the request`,
    http: 'get',
    build: (k) => ownHttpIn(k, { upload: true }),
    requests: [request],
    deviation: {
      why: 'a malformed upload is the client\'s fault: Runnel answers 400 with a JSON reason instead of a bare 500',
      runnel: (nodeRed) => nodeRed.status !== 500 ? nodeRed : {
        status: 400,
        type: 'application/json; charset=utf-8',
        body: { code: 'invalid_multipart', message: `Malformed multipart body: ${reason}` },
      },
    },
  };
}

export const uploadCases: DiffCase[] = [
  {
    name: 'upload-multipart', about: 'upload: text fields nest by bracket names into msg.payload, files reach msg.req.files from memory',
    http: 'get',
    build: (k) => ownHttpIn(k, { upload: true }),
    requests: [post(MIXED, FORM), post(NAMES, FORM), post(SKIPPED, FORM)],
  },
  {
    name: 'upload-other-bodies', about: 'upload: JSON and form bodies are parsed as usual, any other body leaves {}',
    http: 'get',
    build: (k) => ownHttpIn(k, { upload: true }),
    requests: [
      post('{"a":[1,2]}', 'application/json'),
      post('a=1&b=2', 'application/x-www-form-urlencoded'),
      post('plain text', 'text/plain'),
      post('bytes', 'application/octet-stream'),
    ],
  },
  {
    name: 'upload-off-multipart', about: 'without upload a multipart body is the raw bytes',
    http: 'get',
    build: (k) => ownHttpIn(k, {}),
    requests: [post(multipart([field('a', '1')]), FORM)],
  },
  malformed('upload-no-boundary', 'a multipart type without its boundary', post(multipart([field('a', '1')]), 'multipart/form-data'),
    'Multipart: Boundary not found'),
  malformed('upload-truncated', 'a multipart body cut off inside a part', post(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\ncut`, FORM),
    'Unexpected end of multipart data'),
  {
    name: 'skip-body-parsing', about: 'skipBodyParsing: msg.payload and msg.req.body are the raw bytes as a Buffer, whatever the type',
    http: 'get',
    build: (k) => ownHttpIn(k, { skipBodyParsing: true }),
    requests: [
      post('{"a":1}', 'application/json'),
      post('{not json', 'application/json'),
      post('a=1&b=2', 'application/x-www-form-urlencoded'),
      post('héllo', 'text/plain'),
      post(multipart([field('a', '1')]), FORM),
      { method: 'POST' },
    ],
  },
  {
    name: 'skip-body-parsing-upload', about: 'skipBodyParsing wins over upload: the multipart body stays raw',
    http: 'get',
    build: (k) => ownHttpIn(k, { skipBodyParsing: true, upload: true }),
    requests: [post(multipart([field('a', '1'), file('f', 'f.txt', 'text/plain', 'x')]), FORM)],
  },
];
