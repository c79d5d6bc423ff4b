import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WebSocket } from 'ws';
import { eventually, request, tempDir } from '../helpers/server.js';
import { killRunnels, spawnRunnel, type RunnelProcess } from '../helpers/process.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

/**
 * Safe mode: an inject that fires once at start feeding code with no time
 * limit held the process at every restart. `runnel start --safe` (or RUNNEL_SAFE=1) starts with
 * the flows loaded but stopped, as Node-RED's --safe does, so the user can fix and deploy them.
 */
const runaway = [
  { id: 't', type: 'tab', label: 't' },
  { id: 'inj', type: 'inject', z: 't', once: true, onceDelay: 1, props: [{ p: 'payload' }], wires: [['fn']] },
  { id: 'fn', type: 'function', z: 't', name: 'spin', func: 'while (true) {}', outputs: 1, wires: [[]] },
];
const fixed = runaway.map((n) => (n.id === 'fn' ? { ...n, func: 'return msg;' } : n));
/** No time limit: the runaway is stopped by nothing but safe mode. */
const settings = { globalFunctionTimeout: 0 };

let dir: string;
before(async () => {
  dir = await tempDir();
});
after(async () => {
  killRunnels();
  await removeDir(dir);
});

async function userDirWith(name: string, flows: unknown[]): Promise<string> {
  const base = path.join(dir, name);
  await mkdir(path.join(base, 'user'), { recursive: true });
  await writeFile(path.join(base, 'user', 'flows.json'), JSON.stringify(flows));
  return base;
}

const flowsState = async (r: RunnelProcess) => (await request(new URL('flows/state', r.url).href)).body as { state: string };

/** The retained runtime-state notifications a freshly connected editor receives. */
async function runtimeStateNotice(url: string): Promise<Record<string, unknown>> {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + 'comms');
  const received: { topic: string; data: Record<string, unknown> }[] = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as unknown;
    if (Array.isArray(frame)) received.push(...(frame as typeof received));
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(JSON.stringify({ subscribe: 'notification/runtime-state' }));
  try {
    const notice = await eventually(() => received.find((e) => e.topic === 'notification/runtime-state'), 15_000);
    return notice!.data;
  } finally {
    ws.terminate();
  }
}

describe('safe mode: flows that hold the process from start can be stopped and fixed', () => {
  test('reproduced: without safe mode, a runaway fed at start holds the admin API', async () => {
    const runnel = await spawnRunnel(await userDirWith('plain', runaway), settings);
    // The inject fires 1 s after start; from then on nothing answers.
    await eventually(() => request(new URL('flows', runnel.url).href, { signal: AbortSignal.timeout(2000) }).then(() => false, () => true), 30_000);
    runnel.child.kill('SIGKILL');
    await runnel.exited;
  });

  test('runnel start --safe loads the flows stopped, tells the editor as Node-RED does, and a deploy starts them', async () => {
    const runnel = await spawnRunnel(await userDirWith('safe', runaway), settings, ['--safe']);
    assert.deepEqual(await flowsState(runnel), { state: 'safe' });
    const flows = await request(new URL('flows', runnel.url).href);
    assert.equal(flows.status, 200);
    assert.equal((flows.body as { id: string; func?: string }[]).find((n) => n.id === 'fn')?.func, 'while (true) {}');
    assert.deepEqual(await runtimeStateNotice(runnel.url), { state: 'safe', error: 'safe-mode', type: 'warning', text: 'notification.warnings.safe-mode' });
    await deploy(runnel, fixed, { type: 'nodes' });
    assert.deepEqual(await flowsState(runnel), { state: 'start' });
    assert.equal((await runtimeStateNotice(runnel.url)).state, 'start');
    runnel.child.kill('SIGTERM');
    assert.equal(await runnel.exited, 0);
  });

  test('RUNNEL_SAFE=1 starts in safe mode, and POST /flows/state {state: "start"} starts the flows', async () => {
    const runnel = await spawnRunnel(await userDirWith('env', fixed), settings, [], { RUNNEL_SAFE: '1' });
    assert.deepEqual(await flowsState(runnel), { state: 'safe' });
    const res = await request(new URL('flows/state', runnel.url).href, { method: 'POST', json: { state: 'start' } });
    assert.deepEqual([res.status, res.body], [200, { state: 'start' }]);
    assert.deepEqual(await flowsState(runnel), { state: 'start' });
    runnel.child.kill('SIGTERM');
    assert.equal(await runnel.exited, 0);
  });
});
