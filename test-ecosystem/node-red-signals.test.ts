/**
 * Signals side by side: Node-RED 4.1.15's `red.js` and Runnel's `bin/node-red.js` each run a user
 * dir with file context, set context through a flow, and get SIGHUP, SIGINT or SIGTERM (a closed
 * terminal, Ctrl-C, a service manager). Both must stop the same way: nodes closed (a function's
 * On Stop code runs) and the file context on disk holding everything set before the signal.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ensurePeer } from '../bench/peer.js';
import { removeDir, tempDir } from '../test/helpers/dirs.js';
import { NODE_RED_BIN } from '../test/helpers/process.js';
import { eventually } from '../test/helpers/server.js';
import { PEER_DIR, RED_JS, startNodeRed, stopNodeReds } from './node-red-process.js';

const FLOWS = [
  { id: 't', type: 'tab' },
  { id: 'in', type: 'http in', z: 't', url: '/set', method: 'get', x: 1, y: 1, wires: [['fn']] },
  {
    id: 'fn', type: 'function', z: 't', outputs: 1, x: 1, y: 1, wires: [['out']],
    func: 'global.set("n", 7); flow.set("f", "x"); return msg;',
    finalize: 'global.set("stopped", true);',
  },
  { id: 'out', type: 'http response', z: 't', x: 1, y: 1, wires: [] },
];

async function json(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

describe('SIGHUP, SIGINT and SIGTERM: Node-RED 4.1.15 and Runnel stop alike, file context written', { timeout: 900_000 }, () => {
  let dir: string;
  before(async () => {
    await ensurePeer(PEER_DIR, (line) => console.log(line));
    dir = await tempDir('runnel-node-red-signals-');
  }, { timeout: 600_000 });
  after(async () => {
    await stopNodeReds();
    await removeDir(dir);
  });

  for (const signal of ['SIGHUP', 'SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: the same exit, On Stop run, the context set before it on disk`, async () => {
      const seen: unknown[] = [];
      for (const [name, bin] of [['node-red', RED_JS], ['runnel', NODE_RED_BIN]] as const) {
        const userDir = path.join(dir, `${signal}-${name}`);
        await mkdir(userDir);
        await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(FLOWS));
        // The file store's 30 s flush interval: nothing reaches the disk before the signal but by the stop.
        await writeFile(path.join(userDir, 'settings.js'), 'module.exports = { flowFile: "flows.json", contextStorage: { default: { module: "localfilesystem" } } };\n');
        const run = await startNodeRed(bin, ['-u', userDir], dir, 'flows');
        try {
          await eventually(async () => (await fetch(`${run.base}set`, { signal: AbortSignal.timeout(10_000) })).status === 200);
          process.kill(run.pid, signal);
          const exit = await run.exit;
          seen.push({ name, exit, global: await json(path.join(userDir, 'context', 'global', 'global.json')), flow: await json(path.join(userDir, 'context', 't', 'flow.json')) });
        } finally {
          await run.stop();
        }
      }
      assert.deepEqual(seen, ['node-red', 'runnel'].map((name) => ({ name, exit: 0, global: { n: 7, stopped: true }, flow: { f: 'x' } })));
    });
  }
});
