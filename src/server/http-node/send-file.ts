import { finished } from 'node:stream';
import path from 'node:path';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type Send from 'send';
import { lazy } from '../../base/lazy.js';
import { setFileType } from './mime.js';

const send = lazy<typeof Send>('send');

export type SendFileOptions = Send.SendOptions & { headers?: Record<string, string | number | string[]> };
export type SendFileCallback = (err?: Error & { code?: string; syscall?: string; status?: number }) => void;
type Next = (err?: unknown) => void;

/**
 * Express 4's `res.sendFile` on the `send` package (ranges, ETag, Last-Modified, conditional GETs,
 * `root`, `maxAge`, `dotfiles`, extra `headers`). Without a callback a failure goes on to the
 * route's `next` as in Express: a directory falls through, a missing file is the router's 404.
 */
export function sendFile(req: IncomingMessage, res: ServerResponse, file: string, options?: SendFileOptions | SendFileCallback, callback?: SendFileCallback): void {
  let done = callback;
  let opts: SendFileOptions = {};
  if (typeof options === 'function') done = options;
  else if (options) opts = options;
  if (!file) throw new TypeError('path argument is required to res.sendFile');
  if (typeof file !== 'string') throw new TypeError('path must be a string to res.sendFile');
  if (!opts.root && !path.isAbsolute(file)) throw new TypeError('path must be absolute or specify root to res.sendFile');
  const next = (req as { next?: Next }).next;
  const stream = send()(req, encodeURI(file), opts);
  pipeFile(res, stream, opts, (err) => {
    if (done) return done(err);
    if (!next) return;
    if (err?.code === 'EISDIR') return next();
    if (err && err.code !== 'ECONNABORTED' && err.syscall !== 'write') next(publicError(err));
  });
}

/**
 * send's errors carry the file system's message (`ENOENT: … stat '/abs/path'`); the route's error
 * answer says only what went wrong, not where the module keeps its files.
 */
function publicError(err: Error & { status?: number; statusCode?: number }): Error {
  const status = err.status ?? err.statusCode ?? 500;
  return Object.assign(new Error(STATUS_CODES[status] ?? 'Error'), { status, code: (err as { code?: string }).code });
}

/** Express's `sendfile`: settles the callback once, whether the file ended, failed or the client left. */
function pipeFile(res: ServerResponse, file: Send.SendStream, options: SendFileOptions, callback: SendFileCallback): void {
  let done = false;
  let streaming: boolean | undefined;
  const settle = (err?: Error & { code?: string }) => {
    if (done) return;
    done = true;
    callback(err);
  };
  const aborted = () => settle(Object.assign(new Error('Request aborted'), { code: 'ECONNABORTED' }));
  file.on('directory', () => settle(Object.assign(new Error('EISDIR, read'), { code: 'EISDIR' })));
  file.on('end', () => settle());
  file.on('error', (err: Error) => settle(err));
  file.on('file', () => {
    streaming = false;
  });
  file.on('stream', () => {
    streaming = true;
  });
  finished(res, (err) => {
    if (err && (err as { code?: string }).code === 'ECONNRESET') return aborted();
    if (err && (err as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE') return settle(err);
    if (err) return aborted();
    setImmediate(() => {
      if (streaming !== false && !done) aborted();
      else settle();
    });
  });
  file.on('headers', setFileType);
  const headers = options.headers;
  if (headers) {
    file.on('headers', (r: ServerResponse) => {
      for (const key of Object.keys(headers)) r.setHeader(key, headers[key]);
    });
  }
  file.pipe(res);
}
