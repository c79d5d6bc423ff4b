/**
 * Both systems under comparison, started the way the bench starts them (bench/systems.ts:
 * child processes on loopback with temp user dirs and equivalent settings), deployed the same
 * flows, and asked the same requests.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deployBody, flowsHeaders, login } from '../../bench/admin-client.js';
import { waitForBody } from '../../bench/poll.js';
import type { FlowNode } from '../../bench/flows.js';
import { ensurePeer5 } from '../../bench/peer.js';
import { makeUsers } from '../../bench/settings-files.js';
import { startSystem, type RunningSystem, type SystemEnv } from '../../bench/systems.js';
import { READY_BODY, READY_PATH, type DiffRequest } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/test-ecosystem/differential → repository root. */
const root = path.resolve(here, '..', '..', '..');
const REQUEST_TIMEOUT_MS = 5000;
const READY_TIMEOUT_MS = 30_000;
/** The lowest bcrypt cost: logging in is not under test. */
const BCRYPT_COST = 4;

export interface Answer {
  status: number | 'no answer';
  type?: string;
  headers?: Record<string, string | null>;
  body?: unknown;
}

export interface Peer {
  label: string;
  system: RunningSystem;
  token: string;
}

export async function systemEnv(log: (line: string) => void): Promise<SystemEnv> {
  const peerDir = path.join(root, 'bench', '.peer5');
  const peerNode = await ensurePeer5(peerDir, path.join(root, 'bench', '.node24'), log);
  const users = await makeUsers(BCRYPT_COST, 0);
  return { root, peerDir, peerNode, benchDir: path.join(root, 'dist', 'bench'), users, bareBody: '' };
}

export async function startPeer(kind: 'runnel' | 'node-red', env: SystemEnv): Promise<Peer> {
  const system = await startSystem(kind, env);
  try {
    const token = await login(system.base, env.users.admin, env.users.password);
    return { label: kind === 'runnel' ? 'Runnel' : 'Node-RED', system, token };
  } catch (e) {
    await system.stop();
    throw e;
  }
}

/** Full deploy, then waits until the flows serve (Node-RED answers POST /flows before starting them). */
export async function deployTo(peer: Peer, flows: FlowNode[]): Promise<void> {
  const res = await fetch(`${peer.system.base}flows`, {
    method: 'POST',
    headers: flowsHeaders(peer.token, 'full'),
    body: deployBody(flows),
    signal: AbortSignal.timeout(READY_TIMEOUT_MS),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${peer.label}: POST /flows answered ${res.status}: ${text.slice(0, 500)}`);
  await waitForBody(peer.system.base + READY_PATH, READY_BODY, READY_TIMEOUT_MS);
}

function toFetch(req: DiffRequest): { query: string; init: RequestInit } {
  if ('msg' in req) {
    return { query: '', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req.msg) } };
  }
  const headers: Record<string, string> = req.contentType ? { 'content-type': req.contentType } : {};
  return { query: req.query ? `?${req.query}` : '', init: { method: req.method, headers, body: req.body } };
}

/** One request; a body that is JSON is parsed so that key order does not count. */
export async function ask(peer: Peer, caseName: string, req: DiffRequest, headerNames: string[] = []): Promise<Answer> {
  const { query, init } = toFetch(req);
  try {
    const res = await fetch(`${peer.system.base}diff/${caseName}${query}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? undefined;
    let body: unknown = text;
    if (type?.startsWith('application/json')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const answer: Answer = { status: res.status, type, body };
    if (headerNames.length) answer.headers = Object.fromEntries(headerNames.map((h) => [h, res.headers.get(h)]));
    return answer;
  } catch {
    return { status: 'no answer' };
  }
}
