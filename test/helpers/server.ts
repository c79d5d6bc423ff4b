import { resolveSettings } from '../../src/settings/settings.js';
import { startRunnel, type RunnelInstance, type RunnelOptions } from '../../src/runnel.js';
import { removeDir, tempDir } from './dirs.js';
import { captureLog } from './log.js';
import { ADMIN_PASSWORD } from './users.js';

// A test that starts a server usually needs users and temp dirs too: one import gives all three.
export { ADMIN_PASSWORD, READER_PASSWORD, adminAuth } from './users.js';
export { tempDir } from './dirs.js';

export interface TestServer {
  url: string;
  /** URL of a path under the admin root (no leading slash needed). */
  at(p: string): string;
  userDir: string;
  instance: RunnelInstance;
  /** Every log line written so far. */
  logs: string[];
  stop(): Promise<void>;
  /** Stops and removes the user dir. */
  dispose(): Promise<void>;
}

/**
 * Starts Runnel in-process on an ephemeral loopback port with a fresh (or given) user dir; resolves
 * once its flows started (`onListening` hears of the URL before that).
 */
export async function startServer(raw: Record<string, unknown> = {}, userDir?: string, options: Pick<RunnelOptions, 'onListening' | 'clock' | 'editorLogin'> = {}): Promise<TestServer> {
  const dir = userDir ?? (await tempDir());
  const settings = resolveSettings({ uiPort: 0, uiHost: '127.0.0.1', userDir: dir, logging: { level: 'info' }, ...raw });
  const captured = captureLog();
  const instance = await startRunnel(settings, { logDestination: captured.sink, ...options });
  const url = instance.url;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await instance.stop();
  };
  return {
    url,
    at: (p: string) => new URL(p.replace(/^\//, ''), url).href,
    userDir: dir,
    instance,
    logs: captured.raw,
    stop,
    dispose: async () => {
      await stop();
      await removeDir(dir);
    },
  };
}

/** Logs in through the real token endpoint and returns the bearer token. */
export async function login(server: Pick<TestServer, 'at'>, username = 'admin', password = ADMIN_PASSWORD, scope = '*'): Promise<string> {
  const res = await fetch(server.at('auth/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'runtime-admin', grant_type: 'password', scope, username, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { access_token: string };
  return body.access_token;
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** fetch + parse; never throws on status. */
export async function request<T = any>(url: string, init: RequestInit & { json?: unknown; token?: string } = {}): Promise<JsonResponse<T>> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await fetch(url, { ...init, headers, body, signal: init.signal ?? AbortSignal.timeout(30_000) });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/**
 * Polls `check` until it returns a truthy value or `ms` passes. The default bound is generous: it
 * only matters when the condition never holds, and a loaded machine needs many times the usual.
 */
export async function eventually<T>(check: () => Promise<T> | T, ms = 30_000, every = 20): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * `call(path, init)` requests `server()` (read when called: a suite starts its server in `before`)
 * and keeps every answer's text in `answers`, for tests that check no secret ever comes back.
 */
export function recordedCalls(server: () => TestServer): { call: (p: string, init?: Parameters<typeof request>[1]) => Promise<JsonResponse>; answers: string[] } {
  const answers: string[] = [];
  const call = async (p: string, init: Parameters<typeof request>[1] = {}) => {
    const res = await request(server().at(p), init);
    answers.push(res.text);
    return res;
  };
  return { call, answers };
}
