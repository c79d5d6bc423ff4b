import http from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
  text: string;
}

/** One HTTP request from a chosen loopback address, so a test can act as several clients. */
export function send(
  url: string,
  options: { method?: string; body?: string | Buffer; headers?: http.OutgoingHttpHeaders; from?: string; timeoutMs?: number } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = http.request(url, { method: options.method ?? 'GET', headers, localAddress: options.from ?? '127.0.0.1', timeout: options.timeoutMs ?? 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** POST /auth/token with the password grant as a form, from `from`. */
export function tokenRequest(base: (p: string) => string, username: string, password: string, from = '127.0.0.1', scope = '*'): Promise<Reply> {
  const body = new URLSearchParams({ client_id: 'runtime-admin', grant_type: 'password', scope, username, password }).toString();
  return send(base('auth/token'), { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' }, from });
}

/** Every file under `dir` whose bytes contain one of `secrets`, as "file: secret". */
export async function filesHolding(dir: string, secrets: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const content = await readFile(path.join(dir, name)).catch(() => undefined);
    if (!content) continue;
    for (const s of secrets) if (content.includes(s)) found.push(`${name}: ${s}`);
  }
  return found;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Resolves once `server` has emitted `event` `count` times from now — for `request`, only requests
 * whose path ends with `path`. Tests wait on it for the server to have seen what they sent, instead
 * of sleeping and hoping it did on a loaded machine.
 */
export function arrivals(server: http.Server, event: 'request' | 'connection' | 'drop', count: number, path = ''): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const listener = (req?: http.IncomingMessage) => {
      if (event === 'request' && !(req?.url ?? '').split('?')[0].endsWith(path)) return;
      if (++seen < count) return;
      server.off(event, listener);
      resolve();
    };
    server.on(event, listener);
  });
}
