import type { Clock } from '../../src/base/clock.js';

/**
 * A clock a test moves by hand, for code that takes one (startServer's and createAuthService's
 * `clock`): expiry and throttling delays are tested without waiting. `sleep` moves it at once.
 */
export interface FakeClock extends Clock {
  advance(ms: number): void;
}

export function fakeClock(start = Date.now()): FakeClock {
  let t = start;
  const advance = (ms: number) => {
    t += ms;
  };
  return {
    now: () => t,
    sleep: async (ms) => advance(ms),
    advance,
  };
}
