import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, request, tempDir } from '../helpers/server.js';
import { killRunnels, spawnRunnel, type RunnelProcess } from '../helpers/process.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

/**
 * Function-node code that starves the event loop. Each attack runs in a real
 * Runnel process (a regression would hang it, not the test runner) from an inject that fires once
 * on deploy, as the campaign's flows did; the attack is refused when the node reports the guard's
 * error (or finishes) and the admin API still answers GET /flows. The time limit is short so the
 * tests wait little; the admin API's bound is generous for a loaded machine.
 */
const LIMIT_MS = 300;
/** How long GET /flows may take while (or after) an attack runs. */
const ADMIN_BOUND_MS = 15_000;

let dir: string;
let runnel: RunnelProcess;
before(async () => {
  dir = await tempDir();
  runnel = await spawnRunnel(dir, { globalFunctionTimeout: LIMIT_MS / 1000 });
});
after(async () => {
  killRunnels();
  await removeDir(dir);
});

/** Deploys `func` fed once by an inject, and waits until the log shows `expected`. */
async function attack(name: string, func: string, expected: RegExp): Promise<void> {
  await deploy(runnel, [
    { id: 'inj', type: 'inject', z: 't', once: true, onceDelay: 0, props: [{ p: 'payload' }], wires: [['fn']] },
    { id: 'fn', type: 'function', z: 't', name, func, outputs: 1, wires: [[]] },
  ], { tab: 't' });
  await eventually(() => expected.test(runnel.output()), 30_000, 100);
  const res = await request(new URL('flows', runnel.url).href, { signal: AbortSignal.timeout(ADMIN_BOUND_MS) });
  assert.equal(res.status, 200);
  assert.equal((res.body as { id: string; type: string }[]).find((n) => n.id === 'fn')?.type, 'function');
}

const stopped = (name: string) => new RegExp(`Function node ${name} ran longer than ${LIMIT_MS} ms`);

describe('runaway function-node code is stopped and the admin API answers', () => {
  test('an endless loop of awaits (while (true) { await null }) is stopped', async () => {
    await attack('await-loop', 'while (true) { await null; }', stopped('await-loop'));
  });

  test('a self-feeding promise chain is stopped', async () => {
    await attack('promise-chain', 'const again = () => Promise.resolve().then(again);\nawait again();', stopped('promise-chain'));
  });

  test('a loop built with new Function is stopped', async () => {
    await attack('new-function', 'new Function("while (true) {}")();', stopped('new-function'));
  });

  test('a loop built with eval is stopped', async () => {
    await attack('eval', 'eval("for (;;) {}");', stopped('eval'));
  });

  test('a loop built with a function constructor reached through a prototype is stopped', async () => {
    await attack('constructor', 'await (async () => {}).constructor("while (true) { await null; }")();', stopped('constructor'));
  });

  test('Atomics.wait cannot block the runtime', async () => {
    await attack('atomics', 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);', /Atomics\.wait cannot be called in a function node/);
  });

  test('a catastrophic regular expression finishes (the linear-time engine takes over)', async () => {
    await attack('regex', 'node.warn("regex " + /^(a+)+b$/.test("a".repeat(64)));', /regex false/);
  });
});

describe('with the default time limit, a runaway holds the admin API and other flows for about a second at most', () => {
  /** The default limit is 1 s; the rest is room for a loaded machine. The old default held it 10 s. */
  const HOLD_BOUND_MS = 4000;
  const attacks = [['await-loop', 'while (true) { await null; }'], ['new-function', 'new Function("while (true) {}")();']];

  test('each attack holds GET /flows for less than the bound, and the error names globalFunctionTimeout', async () => {
    const own = await tempDir();
    try {
      const r = await spawnRunnel(own, {});
      for (const [name, func] of attacks) {
        await deploy(r, [
          { id: 'inj', type: 'inject', z: 't', once: true, onceDelay: 0.1, props: [{ p: 'payload' }], wires: [['fn']] },
          { id: 'fn', type: 'function', z: 't', name, func, outputs: 1, wires: [[]] },
        ], { tab: 't' });
        const stoppedHere = new RegExp(`Function node ${name} ran longer than`);
        let longest = 0;
        // Sequential requests from before the inject fires until after the node reports the error.
        const giveUp = performance.now() + 60_000;
        for (let seen = false, after = 0; after < 2;) {
          assert.ok(performance.now() < giveUp, `${name}: the node reported no error:\n${r.output()}`);
          const started = performance.now();
          const res = await request(new URL('flows', r.url).href, { signal: AbortSignal.timeout(30_000) });
          assert.equal(res.status, 200);
          longest = Math.max(longest, performance.now() - started);
          seen ||= stoppedHere.test(r.output());
          if (seen) after++;
        }
        assert.ok(longest < HOLD_BOUND_MS, `${name}: GET /flows waited ${Math.round(longest)} ms`);
        // A user whose honest code needs longer learns what to raise.
        assert.match(r.output(), new RegExp(`Function node ${name} ran longer than 1000 ms: raise globalFunctionTimeout \\(1 s, in the settings file\\)`));
      }
    } finally {
      killRunnels();
      await removeDir(own);
    }
  });
});

// Node 26 removed the signal_wrap binding the watchdog thread listens through (README, "Command line"):
// there the stop is graceful-only and Runnel warns at start, so these bounds do not hold.
const NO_SIGNAL_WRAP = Number(process.versions.node.split('.')[0]) >= 26 && 'Node 26 has no signal_wrap binding: the stop watchdog cannot run';

describe('SIGTERM stops the process within nodeCloseTimeout + 5 s', { skip: NO_SIGNAL_WRAP }, () => {
  const CLOSE_MS = 1000;
  /** nodeCloseTimeout + the watchdog's 5 s, with room for a loaded machine. */
  const STOP_BOUND_MS = CLOSE_MS + 5000 + 10_000;
  const spin = [
    { id: 'inj', type: 'inject', z: 't', once: true, onceDelay: 1, props: [{ p: 'payload' }], wires: [['fn']] },
    { id: 'fn', type: 'function', z: 't', name: 'spin', func: 'while (true) {}', outputs: 1, wires: [[]] },
  ];

  /** The exit code or signal after SIGTERM, or "still running" past the bound. */
  function stop(r: RunnelProcess): Promise<number | string> {
    r.child.kill('SIGTERM');
    return Promise.race([r.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), STOP_BOUND_MS))]);
  }

  test('code with no time limit holds the main thread: SIGTERM still ends the process (killed after the bound)', async () => {
    const own = await tempDir();
    try {
      const r = await spawnRunnel(own, { globalFunctionTimeout: 0, nodeCloseTimeout: CLOSE_MS });
      await deploy(r, spin, { tab: 't' });
      // The attack is live once the admin API no longer answers.
      await eventually(() => request(new URL('flows', r.url).href, { signal: AbortSignal.timeout(2000) }).then(() => false, () => true), 30_000);
      assert.equal(await stop(r), 'SIGKILL');
      assert.match(r.output(), /runnel: not stopped 6000 ms after SIGTERM: killed/);
    } finally {
      killRunnels();
      await removeDir(own);
    }
  });

  test('flows stored before a restart hold the main thread: SIGTERM still ends the process (the watchdog starts with their nodes)', async () => {
    const own = await tempDir();
    try {
      await mkdir(path.join(own, 'user'), { recursive: true });
      await writeFile(path.join(own, 'user', 'flows.json'), JSON.stringify([{ id: 't', type: 'tab', label: 't' }, ...spin]));
      const r = await spawnRunnel(own, { globalFunctionTimeout: 0, nodeCloseTimeout: CLOSE_MS });
      await eventually(() => request(new URL('flows', r.url).href, { signal: AbortSignal.timeout(2000) }).then(() => false, () => true), 30_000);
      assert.equal(await stop(r), 'SIGKILL');
      assert.match(r.output(), /runnel: not stopped 6000 ms after SIGTERM: killed/);
    } finally {
      killRunnels();
      await removeDir(own);
    }
  });

  test('with the guard on, SIGTERM during an attack stops the process gracefully (exit 0)', async () => {
    const own = await tempDir();
    try {
      const r = await spawnRunnel(own, { globalFunctionTimeout: LIMIT_MS / 1000, nodeCloseTimeout: CLOSE_MS });
      await deploy(r, [{ ...spin[0], onceDelay: 0.1, repeat: '0.5' }, { ...spin[1], func: 'while (true) { await null; }' }], { tab: 't' });
      await eventually(() => stopped('spin').test(r.output()), 30_000, 100);
      assert.equal(await stop(r), 0);
    } finally {
      killRunnels();
      await removeDir(own);
    }
  });
});
