import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { tempDir, request } from '../helpers/server.js';
import { spawnRunnel, killRunnels } from '../helpers/process.js';
import { removeDir } from '../helpers/dirs.js';

/**
 * Kills Runnel with SIGKILL at random instants while deploys stream in (each one a flows save and a
 * revision), then checks after every restart that the history and the flows agree: the newest
 * revision is the served flows, every acknowledged deploy is in the history in order, and the only
 * other revision there may be is the deploy in flight — when its flows were saved too.
 * `npm run test:crash` runs it with RUNNEL_CRASH_KILLS=200.
 */
const KILLS = Number(process.env.RUNNEL_CRASH_KILLS ?? 6);
const sha = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');

function flowsOf(i: number) {
  const flows: Record<string, unknown>[] = [{ id: 't1', type: 'tab', label: `deploy ${i}` }];
  for (let n = 0; n < 40; n++) flows.push({ id: `n${n}`, type: 'comment', z: 't1', x: n, y: i, wires: [], info: `deploy ${i}` });
  return flows;
}

test(`SIGKILL between a deploy and its revision leaves history and flows consistent (${KILLS} kills)`, { timeout: 60_000 + KILLS * 5_000 }, async () => {
  const dir = await tempDir();
  const settings = { credentialSecret: 'history-crash', flowHistory: { max: 100_000 } };
  const acked: string[] = [];
  // Every attempt deploys new content: a deploy whose reply the kill swallowed is never re-sent as
  // an identical (same-rev) deploy, which would put its rev in the history twice.
  let attempt = 0;
  try {
    for (let kill = 0; kill <= KILLS; kill++) {
      const run = await spawnRunnel(dir, settings);
      const at = (p: string) => new URL(p, run.url).href;
      const served = (await request(at('flows'), { headers: { 'Runtime-API-Version': 'v2' } })).body.rev as string;
      const history = (await request(at('flows/history?limit=500'))).body.revisions as { rev: string; action: string }[];
      const deployed = history.filter((r) => r.action === 'deploy').map((r) => r.rev).reverse();
      if (acked.length === 0) {
        // A kill during the very first deploy may leave it saved without its reply: it is then the
        // in-flight deploy, to be expected in the history from now on.
        assert.ok(deployed.length <= 1);
        if (deployed.length === 1) {
          assert.equal(served, deployed[0], `after kill ${kill}: the newest revision is not the served flows`);
          acked.push(deployed[0]);
        }
      } else {
        assert.equal(history[0].rev, served, `after kill ${kill}: the newest revision is not the served flows`);
        const inFlight = deployed.length === acked.length + 1;
        assert.deepEqual(inFlight ? deployed.slice(0, -1) : deployed, acked, `after kill ${kill}: acknowledged deploys missing from the history`);
        if (inFlight) acked.push(deployed[deployed.length - 1]);
        assert.equal(served, acked[acked.length - 1]);
        const head = await request(at(`flows/history/${served}`));
        assert.equal(sha(head.body.flows), served);
      }
      if (kill === KILLS) {
        run.child.kill('SIGTERM');
        assert.equal(await run.exited, 0);
        break;
      }
      const stopAt = Date.now() + 20 + Math.random() * 200;
      const stream = (async () => {
        while (Date.now() < stopAt + 1000) {
          const flows = flowsOf(attempt++);
          const r = await request(at('flows'), { method: 'POST', headers: { 'Runtime-API-Version': 'v2' }, json: { flows, credentials: { n0: { user: `u${attempt}` } } } }).catch(() => undefined);
          if (!r) return;
          assert.equal(r.status, 200, r.text);
          acked.push(sha(flows));
        }
      })();
      await new Promise((r) => setTimeout(r, stopAt - Date.now()));
      run.child.kill('SIGKILL');
      await run.exited;
      await stream;
    }
  } finally {
    killRunnels();
    await removeDir(dir);
  }
});
