import { createHash } from 'node:crypto';
import http from 'node:http';
import { flowsHeaders } from '../admin-client.js';
import { cannon } from '../load.js';
import { adminToken, bigConfig, checkCannon, deployServing } from './common.js';
import type { Scenario, ScenarioContext } from './types.js';

/** Fewer connections than http-chain: each answer is megabytes of JSON. */
const CONNECTIONS = 10;
const GZIP = { 'Accept-Encoding': 'gzip' };

/** The v2 document GET /flows answers for the bench config: what the bare server sends from memory. */
function flowsDocument(ctx: ScenarioContext): string {
  const json = JSON.stringify(bigConfig(ctx, 'ready').flows);
  return `{"flows":${json},"rev":"${createHash('sha256').update(json).digest('hex')}"}`;
}

/** Bytes of one answer on the wire (body only), as the client receives them. */
function answerBytes(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`GET /flows answered ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

export const getFlowsScenario: Scenario = {
  name: 'get-flows-10k',
  description: `GET /flows (v2) on the 10,000-node config, autocannon ${CONNECTIONS} connections × --duration, plain and with Accept-Encoding: gzip; the bare node:http server sends the same bytes from memory`,
  systems: ['runnel', 'node-red', 'bare'],
  metrics: [
    { key: 'rps', label: 'req/s', unit: 'req/s', digits: 1, vsCeiling: true, goals: [{ kind: 'ceiling', op: '>=', value: 0.9 }] },
    { key: 'p50', label: 'latency p50', unit: 'ms', digits: 1 },
    { key: 'kib', label: 'answer size', unit: 'KiB', digits: 0 },
    { key: 'rpsGzip', label: 'req/s, gzip accepted', unit: 'req/s', digits: 1 },
    { key: 'kibGzip', label: 'answer size, gzip accepted', unit: 'KiB', digits: 0 },
  ],
  bareBody: (ctx) => ({ body: flowsDocument(ctx), type: 'application/json; charset=utf-8' }),
  async measure(system, ctx): Promise<Record<string, number>> {
    const url = `${system.base}flows`;
    let headers: Record<string, string> = {};
    if (system.kind !== 'bare') {
      const token = await adminToken(system, ctx);
      await deployServing(system, token, bigConfig(ctx, 'ready'), 'ready');
      headers = flowsHeaders(token);
    }
    const run = async (extra: Record<string, string>) =>
      checkCannon(await cannon({ url, connections: CONNECTIONS, duration: ctx.opts.duration, headers: { ...headers, ...extra } }), `${system.kind} GET /flows`, ctx);
    const plain = await run({});
    const kib = (await answerBytes(url, headers)) / 1024;
    if (system.kind === 'bare') return { rps: plain.rps, p50: plain.p50, kib };
    const gz = await run(GZIP);
    return { rps: plain.rps, p50: plain.p50, kib, rpsGzip: gz.rps, kibGzip: (await answerBytes(url, { ...headers, ...GZIP })) / 1024 };
  },
};
