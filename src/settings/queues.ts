/**
 * `queues`: the durable queues of the `queue out` and `queue in` nodes (README, "Queue wires").
 * Each queue out node may set a lower bound of its own; these are the defaults and the limits.
 */
import { SettingsError } from './settings-error.js';

export interface QueueSettings {
  /** How long a claimed message is held for its consumer without renewal: a dead instance's messages come back after it. */
  leaseMs: number;
  /** How often consumers look for messages no notification announced (back-offs ending, claims lapsing). */
  pollMs: number;
  /** The largest message, as JSON, a queue takes. */
  maxMessageBytes: number;
  /** A queue's default bound in messages. */
  maxLength: number;
  /** A queue's default bound in bytes (of the stored JSON). */
  maxBytes: number;
  /** The wait before a failed message's second attempt; it doubles per attempt, to at most a minute. */
  backoffMs: number;
}

const DEFAULT_QUEUE_SETTINGS: QueueSettings = {
  leaseMs: 30_000,
  pollMs: 1000,
  maxMessageBytes: 1024 * 1024,
  maxLength: 100_000,
  maxBytes: 256 * 1024 * 1024,
  backoffMs: 1000,
};

const LIMITS: Record<keyof QueueSettings, [min: number, max: number]> = {
  leaseMs: [100, 3_600_000],
  pollMs: [10, 60_000],
  maxMessageBytes: [64, 64 * 1024 * 1024],
  maxLength: [1, 100_000_000],
  maxBytes: [1024, 1024 ** 4],
  backoffMs: [10, 60_000],
};

/** The settings; throws SettingsError saying what is wrong with them. */
export function parseQueueSettings(v: unknown): QueueSettings {
  if (v === undefined || v === null) return DEFAULT_QUEUE_SETTINGS;
  if (typeof v !== 'object' || Array.isArray(v)) throw new SettingsError('queues must be an object such as {"leaseMs": 30000}');
  const result = { ...DEFAULT_QUEUE_SETTINGS };
  for (const [key, value] of Object.entries(v)) {
    const limits = LIMITS[key as keyof QueueSettings] as [number, number] | undefined;
    if (!limits) throw new SettingsError(`queues.${key} is not a setting (${Object.keys(LIMITS).join(', ')})`);
    if (typeof value !== 'number' || !Number.isInteger(value) || value < limits[0] || value > limits[1]) {
      throw new SettingsError(`queues.${key} must be a whole number between ${limits[0]} and ${limits[1]}`);
    }
    result[key as keyof QueueSettings] = value;
  }
  return result;
}
