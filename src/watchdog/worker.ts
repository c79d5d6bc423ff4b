/** The stop watchdog's thread (see stop-watchdog.ts). */
import { writeSync } from 'node:fs';
import { constants } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { StopWatchdogData } from './stop-watchdog.js';

interface SignalHandle {
  onsignal: () => void;
  start(signum: number): number;
}

type SignalWrap = { Signal: new () => SignalHandle };

const { boundMs, signals } = workerData as StopWatchdogData;

function signalWrap(): SignalWrap | undefined {
  // process.binding warns that it is deprecated; the warning would reach the user's terminal.
  process.noDeprecation = true;
  try {
    return (process as unknown as { binding(name: string): SignalWrap }).binding('signal_wrap');
  } catch {
    return undefined;
  }
}

/** Written straight to the file descriptor: the main thread, which relays a worker's stderr, may be held. */
function kill(reason: string): void {
  writeSync(2, `runnel: ${reason}: killed\n`);
  process.kill(process.pid, 'SIGKILL');
}

let first: string | undefined;
const wrap = signalWrap();
let watching = wrap !== undefined;
for (const name of signals) {
  if (!wrap) break;
  const handle = new wrap.Signal();
  handle.onsignal = () => {
    if (first) return kill(`${name} after ${first}`);
    first = name;
    setTimeout(() => kill(`not stopped ${boundMs} ms after ${name}`), boundMs);
  };
  if (handle.start(constants.signals[name]) !== 0) watching = false;
}
parentPort!.postMessage(watching);
