/**
 * A primary-only write refused because this instance does not hold the primary's lease: it was
 * deposed (another instance holds a newer epoch), or it fenced itself before the lease could
 * expire. Refused for good: retrying it later could overwrite what the new primary wrote.
 */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}
