import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ROOT } from './process.js';

/**
 * A git server over HTTPS on 127.0.0.1: Debian's git-http-backend (CGI) behind a node https server
 * with the test CA's certificate, answering only requests with the given user name and token.
 * Git reaches it when GIT_SSL_CAINFO names `caFile`.
 */
export interface GitHttpServer {
  /** `https://127.0.0.1:<port>/` ; a repository `r.git` under `root` is `${url}r.git`. */
  url: string;
  caFile: string;
  /** Authorization headers seen, to check what clients sent. */
  seen: string[];
  close(): Promise<void>;
}

const TLS = path.join(ROOT, 'test', 'fixtures', 'tls');
const BACKEND = '/usr/lib/git-core/git-http-backend';

export async function startGitHttp(root: string, user: string, token: string): Promise<GitHttpServer> {
  const seen: string[] = [];
  const expected = `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;
  const server: Server = createServer({ key: readFileSync(path.join(TLS, 'server.key')), cert: readFileSync(path.join(TLS, 'server.crt')) }, (req, res) => {
    seen.push(req.headers.authorization ?? '');
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const cgi = spawn(BACKEND, [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: user,
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const [name, ...rest] = line.split(':');
        const value = rest.join(':').trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    caFile: path.join(TLS, 'ca.crt'),
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
