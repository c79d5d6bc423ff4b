/**
 * Makes SIGTERM, SIGINT and SIGHUP stop the process within a bound whatever the main thread is doing.
 * The graceful stop (src/cli.ts) is JavaScript on the main thread: code that holds that thread —
 * function-node code without a time limit, a contributed node's endless loop, a regular expression
 * the linear engine cannot take, a close handler that never returns — would leave the signal
 * waiting forever. A worker thread has an event loop of its own, so it hears the signal even then:
 * once `boundMs` has passed since the first signal, or at a second one (a second Ctrl-C), it writes
 * one line on stderr and SIGKILLs the process. A process that stops in time never notices it.
 *
 * Node offers signal events to the main thread only; the worker watches them through Node's
 * `signal_wrap` binding (worker.ts). Should a Node version drop that binding, the watchdog is not
 * started and the caller is told (`false`), so the stop is graceful-only, as before.
 */
import { Worker } from 'node:worker_threads';

/** The signals that stop Runnel gracefully (src/cli.ts); SIGHUP is a closing terminal's. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface StopWatchdogData {
  boundMs: number;
  signals: readonly NodeJS.Signals[];
}

/** Starts the watchdog thread; resolves false when this Node cannot run it. */
export function startStopWatchdog(boundMs: number): Promise<boolean> {
  const data: StopWatchdogData = { boundMs, signals: STOP_SIGNALS };
  // Small heap limits: the thread runs a few lines and holds nothing.
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    workerData: data,
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 1 },
    stdout: false,
    stderr: false,
  });
  worker.unref();
  return new Promise((resolve) => {
    worker.once('message', (ready: boolean) => resolve(ready));
    worker.once('error', () => resolve(false));
    worker.once('exit', () => resolve(false));
  });
}
