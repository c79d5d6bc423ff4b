/**
 * Differential compatibility: the same flows deployed unchanged on real Node-RED 5.0.7 (installed
 * once from npm, run on the npm registry's Node.js 24: see bench/peer.ts) and on Runnel, the same
 * requests sent to both, and their answers (status, content-type, body) compared case by case. The
 * corpus is in ./differential/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cases, corpusFlows, PROCESS_ENV } from './differential/index.js';
import { ask, deployTo, startPeer, systemEnv, type Answer, type Peer } from './differential/peers.js';
import { OUT_ONLY_WS_PATH, startNetworkPeers, UNUSED_WS_PATH, type NetworkPeers } from './differential/network-peers.js';

/** Installing the peer can take a couple of minutes the first time. */
const SETUP_TIMEOUT_MS = 600_000;

/**
 * Node-RED 5 runs on Node.js 24 and Runnel on this machine's Node: V8 from Node 22 on adds the
 * line and column to JSON.parse's message, which the nodes pass on. Not a difference of the runtimes.
 */
function withoutNodeVersion(a: Answer): Answer {
  return JSON.parse(JSON.stringify(a).replace(/ \(line \d+ column \d+\)/g, '')) as Answer;
}

function show(a: Answer): string {
  return JSON.stringify(a, null, 2);
}

describe('differential: Node-RED 5.0.7 and Runnel answer the same flows alike', { timeout: 900_000 }, () => {
  let red: Peer | undefined;
  let runnel: Peer | undefined;
  let network: NetworkPeers | undefined;

  before(async () => {
    // Children inherit the environment; ${VAR} substitution and env-typed values read these.
    Object.assign(process.env, PROCESS_ENV);
    network = await startNetworkPeers();
    Object.assign(process.env, network.env);
    const env = await systemEnv((line) => console.log(line));
    [red, runnel] = await Promise.all([startPeer('node-red', env), startPeer('runnel', env)]);
    const flows = corpusFlows();
    await Promise.all([deployTo(red, flows), deployTo(runnel, flows)]);
    const count = (type: string) => 2 * flows.filter((n) => n.type === type).length;
    // Node-RED 5 connects a websocket-client only once a websocket in or out uses it.
    const usedClients = new Set(flows.filter((n) => n.type === 'websocket in' || n.type === 'websocket out').map((n) => n.client).filter(Boolean));
    await network.ready({ subscriptions: count('mqtt in'), webSockets: 2 * usedClients.size });
    await network.connectListeners([red.system.base, runnel.system.base]);
  }, { timeout: SETUP_TIMEOUT_MS });

  after(async () => {
    await Promise.all([red?.system.stop(), runnel?.system.stop()]);
    await network?.stop();
  });

  for (const c of cases) {
    it(`${c.name}: ${c.about}`, { timeout: 60_000 }, async () => {
      for (const [i, req] of c.requests.entries()) {
        // Both at once: requests within a case stay in order, and each system sees the same order.
        const [expected, actual] = (await Promise.all([ask(red!, c.name, req, c.headers), ask(runnel!, c.name, req, c.headers)])).map(withoutNodeVersion);
        const where = `${c.name}, request ${i + 1} of ${c.requests.length}: ${JSON.stringify(req)}`;
        assert.notEqual(expected.status, 'no answer', `the case itself is broken: Node-RED did not answer (${where})`);
        const wanted = c.deviation ? c.deviation.runnel(expected) : expected;
        const note = c.deviation ? `\ndeliberate difference: ${c.deviation.why}` : '';
        assert.deepStrictEqual(actual, wanted, `${where}${note}\nNode-RED: ${show(expected)}\nRunnel:   ${show(actual)}`);
      }
    });
  }

  it('websocket-client-on-demand: neither system connects a websocket-client no node uses; both connect one a websocket out uses', () => {
    // Connections cannot be told apart by system at the peer, so this is checked over both at once.
    const paths = network!.webSocketPaths();
    assert.deepEqual(paths.filter((p) => p === UNUSED_WS_PATH), []);
    assert.ok(paths.filter((p) => p === OUT_ONLY_WS_PATH).length >= 2, JSON.stringify(paths));
  });
});
