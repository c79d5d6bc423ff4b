import { performance } from 'node:perf_hooks';
import { deployBody, flowsHeaders } from '../admin-client.js';
import { messageLoopFlow } from '../flows.js';
import { adminToken, sleep } from './common.js';
import type { Scenario } from './types.js';

const RESULT_PATH = 'bench/loop-result';
const RING_SIZE = 10;
const TIMEOUT_MS = 300_000;

interface LoopResult {
  start?: number;
  end?: number;
  count?: number;
}

/**
 * msg-throughput: one message makes --messages hops round a ring of function nodes. The start
 * and end times come from inside the runtime, so the figure excludes deploy and polling.
 */
export const msgThroughputScenario: Scenario = {
  name: 'msg-throughput',
  description: `one injected message makes --messages hops round a ring of ${RING_SIZE} function nodes (counter in the message)`,
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'rate', label: 'messages/s', unit: 'msg/s', digits: 0, goals: [{ kind: 'ratio', op: '>=', value: 10 }] },
    { key: 'elapsed', label: 'time to finish', unit: 'ms', digits: 0 },
  ],
  async measure(system, ctx) {
    const messages = ctx.opts.messages;
    const token = await adminToken(system, ctx);
    const res = await fetch(`${system.base}flows`, {
      method: 'POST',
      headers: flowsHeaders(token, 'full'),
      body: deployBody(messageLoopFlow(messages, RING_SIZE, `/${RESULT_PATH}`)),
    });
    if (res.status !== 200) throw new Error(`POST /flows answered ${res.status}: ${await res.text()}`);
    const deadline = performance.now() + TIMEOUT_MS;
    while (performance.now() < deadline) {
      await sleep(50);
      const poll = await fetch(system.base + RESULT_PATH).catch(() => undefined);
      if (poll?.status !== 200) continue;
      const r = (await poll.json()) as LoopResult;
      if (r.end === undefined || r.start === undefined) continue;
      if (r.count !== messages) throw new Error(`the loop ended after ${r.count} hops, expected ${messages}`);
      const elapsed = Math.max(r.end - r.start, 1);
      return { rate: (messages * 1000) / elapsed, elapsed };
    }
    throw new Error(`the message loop did not finish within ${TIMEOUT_MS / 1000} s`);
  },
};
