/** A clock a test moves by hand, for code with a `now` option: expiry is tested without sleeping. */
export interface FakeClock {
  now: () => number;
  advance(ms: number): void;
}

export function fakeClock(start = Date.now()): FakeClock {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}
