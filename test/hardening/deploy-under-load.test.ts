import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

/**
 * 50 keep-alive clients (the variant) calling http in → function (answers from a 20 ms timer) → http response
 * while full deploys replace the function every 100 ms: the old flow has a second to answer what
 * it took, so every request is answered 200, by the old flow or the new one. The flow is written
 * as scripts write flows, without x/y: Node-RED's rule then calls its nodes config nodes, and
 * they must still close in message order (http in first) for the old flow to finish its requests.
 */
const CLIENTS = 50;
const DEPLOYING_MS = 3000;
const DEPLOY_EVERY_MS = 100;

function slowAnswer(version: number) {
  return [
    { id: 't', type: 'tab', label: 'under load' },
    { id: 'in', type: 'http in', z: 't', url: '/slow', method: 'get', wires: [['fn']] },
    {
      id: 'fn', type: 'function', z: 't', outputs: 1, wires: [['out']],
      func: `// version ${version}\nsetTimeout(() => { msg.payload = 'answered'; node.send(msg); }, 20);\nreturn null;`,
    },
    { id: 'out', type: 'http response', z: 't', wires: [] },
  ];
}

/** One GET on the shared keep-alive agent: its status and body. */
function get(url: string, agent: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
  });
}

let server: TestServer;
before(async () => {
  server = await startServer({ logging: { level: 'fatal' } });
});
after(() => server.dispose());

test('keep-alive requests in flight across full deploys every 100 ms are all answered, also by nodes without x/y', { timeout: 60_000 }, async () => {
  await deploy(server, slowAnswer(0));
  const url = new URL('/slow', server.url).href;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const failures: string[] = [];
  let answered = 0;
  let running = true;
  const client = async () => {
    while (running) {
      try {
        const r = await get(url, agent);
        if (r.status === 200 && r.body === 'answered') answered++;
        else failures.push(`${r.status} ${r.body}`);
      } catch (e) {
        failures.push((e as Error).message);
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  try {
    await sleep(200);
    let deploys = 0;
    for (const end = Date.now() + DEPLOYING_MS; Date.now() < end; ) {
      await Promise.all([deploy(server, slowAnswer(++deploys), { type: 'full' }), sleep(DEPLOY_EVERY_MS)]);
    }
    await sleep(200);
  } finally {
    running = false;
    await Promise.all(clients);
    agent.destroy();
  }
  assert.ok(answered > CLIENTS, `only ${answered} answered`);
  assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${failures.length + answered} failed`);
});
