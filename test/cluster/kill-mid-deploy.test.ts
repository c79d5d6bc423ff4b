import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pg from 'pg';
import { revOf } from '../../src/storage/rev.js';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { type TestPostgres } from '../helpers/postgres.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';

/** An instance SIGKILLed in the middle of deploys: the database holds the old or the new rev, never a mix. */

const hello = (text: string, extra = 0) => [
  { id: 't1', type: 'tab', label: 'Hello' },
  { id: 'in', type: 'http in', z: 't1', url: '/hello', method: 'get', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 't1', outputs: 1, x: 1, y: 1, wires: [['out']], func: `msg.payload = ${JSON.stringify(text)}; return msg;` },
  { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
  ...Array.from({ length: extra }, (_, i) => ({ id: `c${i}`, type: 'comment', z: 't1', name: text, x: 1, y: 1, wires: [] })),
];

describe('cluster: SIGKILL during a deploy', { timeout: 120_000 }, () => {
  let server: TestPostgres;
  let nodes: ClusterInstance[];

  const suite = clusterSuite('killed', 2);
  before(() => {
    ({ pg: server, nodes } = suite);
  });

  it('leaves the old or the new configuration whole, and the survivor serves it', async () => {
    const [victim, survivor] = nodes as [ClusterInstance, ClusterInstance];
    const token = (await request(victim.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
    })).body.access_token;
    const first = hello('old', 10);
    const ok = await request(victim.at('flows'), { method: 'POST', token, json: first, headers: { 'Runtime-API-Version': 'v1' } });
    assert.equal(ok.status, 204, ok.text);
    await eventually(async () => (await request(survivor.at('hello'))).text === 'old', 5000);

    // A large deploy keeps the transaction busy for a while; the kill lands somewhere inside it.
    const next = hello('new', 20_000);
    const sent = request(victim.at('flows'), { method: 'POST', token, json: next, headers: { 'Runtime-API-Version': 'v1' } }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 150));
    victim.process.child.kill('SIGKILL');
    await victim.process.exited;
    await sent;

    const client = new pg.Client(server.url);
    await client.connect();
    try {
      const { rows } = await client.query('SELECT rev, flows FROM killed.flows');
      const stored = rows[0] as { rev: string; flows: string };
      assert.ok([revOf(first), revOf(next)].includes(stored.rev), 'the stored rev is the old or the new one');
      assert.equal(revOf(JSON.parse(stored.flows)), stored.rev, 'the stored flows are the ones the rev names');
      const expected = stored.rev === revOf(first) ? 'old' : 'new';
      await eventually(async () => (await request(survivor.at('hello'))).text === expected, 10_000);
    } finally {
      await client.end();
    }
  });
});
