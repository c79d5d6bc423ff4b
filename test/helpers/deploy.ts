import assert from 'node:assert/strict';
import { request } from './server.js';

/** One node of a flow configuration, as the admin API takes it. */
export type Conf = Record<string, unknown>;

export type DeploymentType = 'full' | 'nodes' | 'flows' | 'reload';

export interface DeployOptions {
  /** Puts the nodes on this tab (given as its id, or as the whole tab node) instead of deploying them as they are. */
  tab?: string | Conf;
  /** Bearer token, for servers with adminAuth. */
  token?: string;
  /** Runtime-Deployment-Type; the server's default is full. */
  type?: DeploymentType;
  /** Runtime-API-Version: v1 posts the array and expects 204; v2 posts `{flows, credentials, rev}` and expects 200 `{rev}`. */
  api?: 'v1' | 'v2';
  /** v2 only: the credentials map of the body. */
  credentials?: Record<string, unknown>;
  /** v2 only: the rev the deploy is based on (a stale one is refused). */
  rev?: string;
}

/**
 * Deploys a configuration through POST /flows, as an editor would, and fails the test unless the
 * server accepted it. Answers the new rev (v2 only). `target` is a TestServer or a spawned Runnel.
 */
export async function deploy(target: { url: string }, flows: Conf[], options: DeployOptions & { api: 'v2' }): Promise<string>;
export async function deploy(target: { url: string }, flows: Conf[], options?: DeployOptions): Promise<string | undefined>;
export async function deploy(target: { url: string }, flows: Conf[], options: DeployOptions = {}): Promise<string | undefined> {
  const api = options.api ?? 'v1';
  const tab = typeof options.tab === 'string' ? { id: options.tab, type: 'tab', label: options.tab } : options.tab;
  const nodes = tab ? [tab, ...flows] : flows;
  const headers: Record<string, string> = { 'Runtime-API-Version': api };
  if (options.type) headers['Runtime-Deployment-Type'] = options.type;
  const json = api === 'v2' ? { flows: nodes, credentials: options.credentials, rev: options.rev } : nodes;
  const r = await request(new URL('flows', target.url).href, { method: 'POST', token: options.token, headers, json });
  assert.equal(r.status, api === 'v2' ? 200 : 204, `deploy failed: ${r.status} ${r.text}`);
  return api === 'v2' ? (r.body as { rev: string }).rev : undefined;
}
