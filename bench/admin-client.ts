/** The slice of the Node-RED admin API the bench drives; Runnel serves the same routes. */
import { performance } from 'node:perf_hooks';
import type { FlowNode } from './flows.js';
import { NotServingError, waitForBody } from './poll.js';

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
  // The reply is bounded by the same time as serving: a system that neither replies nor serves
  // within it is reported as not serving, whichever of the two is still outstanding.
  const replySignal = AbortSignal.any([abort.signal, AbortSignal.timeout(timeoutMs)]);
  const reply = postFlows(base, token, body, type, replySignal).then(
    () => performance.now() - t0,
    (e: unknown) => {
      if (performance.now() - t0 >= timeoutMs) throw new NotServingError(timeoutMs, 'no reply to POST /flows');
      throw e;
    },
  );
  const served = waitForBody(probeUrl, expected, timeoutMs, abort.signal).then((at) => at - t0);
  try {
    const [replyMs, serveMs] = await Promise.all([reply, served]);
    return { serveMs, replyMs };
  } catch (e) {
    abort.abort();
    await Promise.allSettled([reply, served]);
    throw e;
  }
}
