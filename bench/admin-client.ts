/** The slice of the Node-RED admin API the bench drives; Runnel serves the same routes. */
import { performance } from 'node:perf_hooks';
import type { FlowNode } from './flows.js';

export const CLIENT_ID = 'node-red-admin';

export async function login(base: string, username: string, password: string): Promise<string> {
  const res = await fetch(`${base}auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLIENT_ID, grant_type: 'password', scope: '*', username, password }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /auth/token answered ${res.status}: ${text.slice(0, 200)}`);
  return (JSON.parse(text) as { access_token: string }).access_token;
}

export function flowsHeaders(token: string, deploymentType?: 'full' | 'nodes'): Record<string, string> {
  return {
    Authorization: `Bearer ${token}`,
    'Node-RED-API-Version': 'v2',
    ...(deploymentType ? { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': deploymentType } : {}),
  };
}

/** The v2 body for POST /flows, serialised up front so that timing excludes it. */
export function deployBody(flows: FlowNode[]): string {
  return JSON.stringify({ flows });
}

export async function postFlows(base: string, token: string, body: string, type: 'full' | 'nodes', signal: AbortSignal) {
  const res = await fetch(`${base}flows`, { method: 'POST', headers: flowsHeaders(token, type), body, signal });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /flows (${type}) answered ${res.status}: ${text.slice(0, 300)}`);
}

/**
 * Polls `url` until it answers 200 with exactly `expected`. Each poll has its own timeout because
 * a request caught by a redeploy can be dropped by the node that was replaced.
 */
export async function waitForBody(url: string, expected: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = 'no answer';
  while (performance.now() < deadline) {
    signal?.throwIfAborted();
    const pollSignal = signal ? AbortSignal.any([signal, AbortSignal.timeout(2000)]) : AbortSignal.timeout(2000);
    try {
      const res = await fetch(url, { signal: pollSignal });
      const text = await res.text();
      if (res.status === 200 && text === expected) return;
      last = `${res.status} ${text.slice(0, 80)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`${url} did not answer ${JSON.stringify(expected)} within ${timeoutMs} ms (last: ${last})`);
}

export interface DeployTiming {
  /** Milliseconds from sending POST /flows until the probe answers the new body. */
  serveMs: number;
  /** Milliseconds from sending POST /flows until its reply. */
  replyMs: number;
}

/**
 * Deploys and measures until the flow serves: the probe is polled from the moment the request is
 * sent, because a runtime may reply before its nodes have started (Node-RED does).
 */
export async function timedDeploy(
  base: string, token: string, body: string, type: 'full' | 'nodes',
  probeUrl: string, expected: string, timeoutMs: number,
): Promise<DeployTiming> {
  const abort = new AbortController();
  const t0 = performance.now();
  const reply = postFlows(base, token, body, type, abort.signal).then(() => performance.now() - t0);
  const served = waitForBody(probeUrl, expected, timeoutMs, abort.signal).then(() => performance.now() - t0);
  try {
    const [replyMs, serveMs] = await Promise.all([reply, served]);
    return { serveMs, replyMs };
  } catch (e) {
    abort.abort();
    await Promise.allSettled([reply, served]);
    throw e;
  }
}
