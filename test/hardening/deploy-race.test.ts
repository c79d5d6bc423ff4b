import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { request, startServer, type TestServer } from '../helpers/server.js';

/**
 * Concurrent deploys: in every round several clients POST /flows v2 with the same
 * rev at once. Exactly one wins, the others get 409 version_mismatch, and both what is served and
 * what is on disk are exactly the winner's submission with a rev that is the hash of its content.
 */
const ROUNDS = Number(process.env.RUNNEL_RACE_ROUNDS ?? 1000);
const CLIENTS = 4;

let server: TestServer;
before(async () => {
  server = await startServer({ logging: { level: 'fatal' } });
});
after(() => server.dispose());

function submission(round: number, client: number) {
  return [
    { id: 't', type: 'tab', label: `round ${round} client ${client}` },
    { id: `c${client}`, type: 'comment', z: 't', x: 10, y: 10, name: `${round}/${client}`, wires: [] },
  ];
}

const hash = (flows: unknown) => createHash('sha256').update(JSON.stringify(flows)).digest('hex');

test(`concurrent deploys with one rev: exactly one wins, ${ROUNDS} rounds`, { timeout: 600_000 }, async () => {
  const v2 = { 'runtime-api-version': 'v2' };
  let rev = (await request(server.at('flows'), { headers: v2 })).body.rev as string;
  for (let round = 0; round < ROUNDS; round++) {
    const bodies = Array.from({ length: CLIENTS }, (_, c) => submission(round, c));
    const answers = await Promise.all(bodies.map((flows) => request(server.at('flows'), { method: 'POST', headers: v2, json: { flows, rev } })));
    const winners = answers.flatMap((a, c) => (a.status === 200 ? [c] : []));
    assert.equal(winners.length, 1, `round ${round}: ${answers.map((a) => a.status).join(',')}`);
    for (const a of answers) {
      if (a.status !== 200) assert.deepEqual([a.status, a.body.code], [409, 'version_mismatch'], `round ${round}: ${a.text}`);
    }
    const winner = bodies[winners[0]];
    const newRev = answers[winners[0]].body.rev as string;
    assert.equal(newRev, hash(winner));
    const served = await request(server.at('flows'), { headers: v2 });
    assert.deepEqual(served.body, { flows: winner, rev: newRev });
    const onDisk = JSON.parse(await readFile(path.join(server.userDir, 'flows.json'), 'utf8'));
    assert.deepEqual(onDisk, winner);
    rev = newRev;
  }
  console.log(`ran ${ROUNDS} deploy races of ${CLIENTS} clients`);
});
