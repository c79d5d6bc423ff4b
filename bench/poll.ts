/** A poll left unanswered this long is dropped; the next one is already out (see waitForBody). */
const POLL_TIMEOUT_MS = 10_000;
/** Pause between polls while the system answers promptly. */
const POLL_GAP_MS = 2;
/** How long a poll may stay unanswered before another one is sent beside it. */
const POLL_STAGGER_MS = 20;
/**
 * Enough for every poll a dropping window can swallow: Node-RED drops the requests that reach a node
 * it is stopping, and with 8 in flight a window of ~160 ms left all of them hanging until
 * POLL_TIMEOUT_MS, so its 1-node redeploy of 10,000 nodes measured 10.4 s instead of when it served.
 */
const POLL_MAX_IN_FLIGHT = 500;

/** The probe did not answer the expected body in the time given: the system's result, not a harness failure. */
export class NotServingError extends Error {
  constructor(readonly timeoutMs: number, readonly last: string) {
    super(`not serving after ${minutesOrMs(timeoutMs)} (last answer: ${last})`);
  }

  /** The text a table cell shows. */
  get brief(): string {
    return `not serving after ${minutesOrMs(this.timeoutMs)}`;
  }
}

function minutesOrMs(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms} ms`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Whichever settles first, or `fallback` after `ms`; the timer is cleared so that it does not hold the process. */
async function within<T>(ms: number, fallback: T, promises: Promise<T>[]): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([...promises, new Promise<T>((r) => (timer = setTimeout(() => r(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `url` until it answers 200 with exactly `expected`; resolves with the performance.now()
 * at which that answer arrived. A request the replaced flow took may never be answered (Node-RED
 * drops a message whose node is closed under it), so a poll that stays out longer than
 * POLL_STAGGER_MS gets another beside it: with one poll at a time, a dropped request hid the new
 * flow's answers for the poll's whole timeout (a 1-node redeploy of Node-RED measured ~2.1 s with
 * a 2 s poll timeout, ~0.5 s with 0.3 s). A server that is merely busy answers every queued poll.
 */
export async function waitForBody(url: string, expected: string, timeoutMs: number, signal?: AbortSignal): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  const done = new AbortController();
  const stopPolls = signal ? AbortSignal.any([signal, done.signal]) : done.signal;
  let last = 'no answer';
  let servedAt: number | undefined;
  let onServed = () => {};
  const served = new Promise<void>((r) => (onServed = r));
  const inFlight = new Set<Promise<void>>();
  const poll = async () => {
    try {
      const res = await fetch(url, { signal: AbortSignal.any([stopPolls, AbortSignal.timeout(POLL_TIMEOUT_MS)]) });
      const text = await res.text();
      if (res.status === 200 && text === expected) {
        servedAt ??= performance.now();
        onServed();
      } else last = `${res.status} ${text.slice(0, 80)}`;
    } catch (e) {
      last = (e as Error).message;
    }
  };
  try {
    while (servedAt === undefined) {
      signal?.throwIfAborted();
      const left = deadline - performance.now();
      if (left <= 0) throw new NotServingError(timeoutMs, last);
      if (inFlight.size >= POLL_MAX_IN_FLIGHT) {
        await within(left, undefined, [...inFlight, served]);
        continue;
      }
      const p: Promise<void> = poll().finally(() => inFlight.delete(p));
      inFlight.add(p);
      const answered = await within(POLL_STAGGER_MS, false, [p.then(() => true), served.then(() => true)]);
      if (answered && servedAt === undefined) await sleep(POLL_GAP_MS);
    }
    return servedAt;
  } finally {
    done.abort();
  }
}
