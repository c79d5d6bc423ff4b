/** Time units as the delay and trigger editors write them, in milliseconds. */
const UNIT_MS: Record<string, number> = {
  ms: 1, millisecond: 1, milliseconds: 1,
  s: 1000, second: 1000, seconds: 1000,
  min: 60_000, minute: 60_000, minutes: 60_000,
  hr: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  day: 86_400_000, days: 86_400_000,
};

/** `value` in `unit`, in ms; an unknown unit is `fallback` (Node-RED's per-field default). */
export function toMillis(value: unknown, unit: unknown, fallback: 'ms' | 's'): number {
  return Number(value) * (UNIT_MS[String(unit)] ?? UNIT_MS[fallback]);
}

/** setTimeout's limit; Node fires longer waits after 1 ms. */
const MAX_TIMER = 2 ** 31 - 1;

export function timerDelay(ms: number): number {
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_TIMER) : MAX_TIMER;
}

/** True when the message has more than `n` own properties, counted without allocating. */
export function hasMoreKeysThan(msg: object, n: number): boolean {
  let count = 0;
  for (const key in msg) {
    if (Object.prototype.hasOwnProperty.call(msg, key) && ++count > n) return true;
  }
  return false;
}
