import type { IncomingHttpHeaders } from 'node:http';
import type { BusboyConstructor, BusboyFileStream } from '@fastify/busboy';
import { RunnelError } from '../../base/errors.js';
import { lazy } from '../../base/lazy.js';

const busboy = lazy<{ Busboy: BusboyConstructor }>('@fastify/busboy');

/** One uploaded file, shaped as multer's memory storage shapes it: what Node-RED flows read from msg.req.files. */
export interface UploadedFile {
  fieldname: string;
  originalname: string;
  encoding: string;
  mimetype: string;
  buffer: Buffer;
  size: number;
}

export interface MultipartBody {
  /** The text fields, nested by their bracket names as multer nests them (null-prototype objects). */
  fields: Record<string, unknown>;
  /** The file parts that carry a file name, in the order they arrived. */
  files: UploadedFile[];
}

/** busboy's default, which multer keeps: a longer text field fails the request. */
const FIELD_SIZE_LIMIT = 1024 * 1024;
/** Fields and parts per request: bounds the objects (and sparse arrays) a body can make. */
const PART_LIMIT = 1000;
/** `a[5]` makes an array of length 6; a huge index would make one huge sparse array. */
const MAX_ARRAY_INDEX = 10_000;

/**
 * Parses a multipart/form-data body the way Node-RED's http-in parses uploads (multer with memory
 * storage, busboy underneath). The body is already in memory, bounded by apiMaxLength, so it is
 * parsed in one write. Anything malformed is a 400, never a crash.
 */
export function parseMultipart(headers: IncomingHttpHeaders, raw: Buffer): Promise<MultipartBody> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, unknown> = Object.create(null);
    const files: UploadedFile[] = [];
    let pending = 0;
    let finished = false;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      reject(err instanceof RunnelError ? err : malformed(err));
    };
    const settle = () => {
      if (finished && pending === 0 && !failed) resolve({ fields, files });
    };
    let parser;
    try {
      parser = busboy().Busboy({
        headers: headers as IncomingHttpHeaders & { 'content-type': string },
        limits: { fieldSize: FIELD_SIZE_LIMIT, fields: PART_LIMIT, parts: PART_LIMIT },
        // busboy 1.x, under multer, takes an empty filename="" as no file name at all.
        isPartAFile: (_name, type, filename) => type === 'application/octet-stream' || (filename !== undefined && filename !== ''),
      });
    } catch (e) {
      fail(e);
      return;
    }
    parser.on('field', (name: string | undefined, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (failed) return;
      if (name === undefined) return fail(new Error('a field has no name'));
      if (valueTruncated) return fail(new RunnelError('payload_too_large', `Form field "${asSent(name)}" is longer than 1 MiB`));
      try {
        appendField(fields, asSent(name), value);
      } catch (e) {
        fail(e);
      }
    });
    parser.on('file', (name: string | undefined, stream: BusboyFileStream, filename: string | undefined, encoding: string, mimetype: string) => {
      // A body cut off inside this part errors its stream, which would crash the process unheard.
      stream.on('error', fail);
      // multer drops file parts without a file name (an empty file input sends filename="").
      if (failed || !filename) {
        stream.resume();
        return;
      }
      if (name === undefined) {
        stream.resume();
        return fail(new Error('a file has no field name'));
      }
      const file = { fieldname: asSent(name), originalname: formDataName(asSent(filename)), encoding, mimetype } as UploadedFile;
      files.push(file);
      pending++;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        // A copy: the chunks are views of the whole request body, which a kept file must not pin.
        file.buffer = Buffer.concat(chunks);
        file.size = file.buffer.length;
        pending--;
        settle();
      });
    });
    const tooMany = () => fail(new RunnelError('payload_too_large', `A form may have at most ${PART_LIMIT} fields and files`));
    parser.on('fieldsLimit', tooMany);
    parser.on('partsLimit', tooMany);
    parser.on('filesLimit', tooMany);
    parser.on('error', fail);
    parser.on('finish', () => {
      finished = true;
      settle();
    });
    parser.end(raw);
  });
}

function malformed(err: unknown): RunnelError {
  const reason = err instanceof Error ? err.message : String(err);
  return new RunnelError('invalid_multipart', `Malformed multipart body: ${reason}`);
}

/**
 * busboy 1.x under multer decodes header parameters (field and file names) as Latin-1, so a
 * UTF-8 name reaches Node-RED flows as its bytes read one per character; @fastify/busboy
 * decodes UTF-8. Flows written for Node-RED see the same strings here.
 */
function asSent(name: string): string {
  return /[^\x00-\x7f]/.test(name) ? Buffer.from(name, 'utf8').toString('latin1') : name;
}

/** multer undoes the three escapes the HTML spec puts in form-data names, and no others. */
function formDataName(name: string): string {
  return name.replace(/%0A|%0D|%22/gi, (m) => (m.toUpperCase() === '%0A' ? '\n' : m.toUpperCase() === '%0D' ? '\r' : '"'));
}

interface Step {
  key: string | number;
  /** The container the next step indexes into. */
  next?: 'object' | 'array';
  /** `name[]`: always collect into an array. */
  append?: boolean;
}

/**
 * append-field's grammar, which multer uses: `a[b][0]` nests, `a[]` appends, a repeated name
 * collects its values into an array; a name outside the grammar is a plain key.
 */
function parsePath(name: string): Step[] {
  const literal = [{ key: name }];
  const first = /^[^[]*/.exec(name)![0];
  if (first === '') return literal;
  const steps: Step[] = [{ key: first }];
  let pos = first.length;
  while (pos < name.length) {
    const tail = steps[steps.length - 1];
    const rest = name.slice(pos);
    if (rest === '[]') {
      tail.append = true;
      break;
    }
    const m = /^\[([^\]]+)\]/.exec(rest);
    if (m === null) return literal;
    pos += m[0].length;
    if (/^\d+$/.test(m[1])) {
      const index = Number(m[1]);
      if (index > MAX_ARRAY_INDEX) throw new RunnelError('invalid_multipart', `Form field "${name}" has an array index over ${MAX_ARRAY_INDEX}`);
      tail.next = 'array';
      steps.push({ key: index });
    } else {
      tail.next = 'object';
      steps.push({ key: m[1] });
    }
  }
  return steps;
}

type Container = Record<string | number, unknown>;

function kind(value: unknown): 'undefined' | 'array' | 'object' | 'scalar' {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : 'scalar';
}

function appendField(store: Record<string, unknown>, name: string, value: string): void {
  const steps = parsePath(name);
  let context = store as Container;
  for (let i = 0; i < steps.length - 1; i++) context = descend(context, steps[i]);
  setLast(context, steps[steps.length - 1], value);
}

function descend(context: Container, step: Step): Container {
  const current = context[step.key];
  switch (kind(current)) {
    case 'undefined':
      return (context[step.key] = step.next === 'array' ? [] : Object.create(null)) as Container;
    case 'object':
      return current as Container;
    case 'array': {
      if (step.next === 'array') return current as Container;
      // Mixed index and name keys: the array becomes an object keyed by its indexes.
      const obj: Container = Object.create(null);
      (current as unknown[]).forEach((item, i) => {
        if (item !== undefined) obj[String(i)] = item;
      });
      return (context[step.key] = obj);
    }
    default: {
      const obj: Container = Object.create(null);
      obj[''] = current;
      return (context[step.key] = obj);
    }
  }
}

function setLast(context: Container, step: Step, value: string): void {
  const current = context[step.key];
  switch (kind(current)) {
    case 'undefined':
      context[step.key] = step.append ? [value] : value;
      break;
    case 'array':
      (current as unknown[]).push(value);
      break;
    case 'object':
      setLast(current as Container, { key: '' }, value);
      break;
    default:
      context[step.key] = [current, value];
  }
}
