import { setTimeout as delay } from 'node:timers/promises';

/** Time as code reads it and waits on it: the system's, or one a test moves by hand instead of sleeping. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now(), sleep: (ms) => delay(ms) };
