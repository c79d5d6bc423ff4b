/**
 * `storage.cluster`: the timings of primary election and following (docs/cluster.md). Shorter
 * timings fail over and catch up faster, at the cost of more statements and of stepping down on
 * shorter stalls; the bounds between them are what keep two primaries from overlapping.
 */
import { SettingsError } from './settings-error.js';

export interface ClusterTimings {
  /** How long a primary's lease lasts on the server's clock unless renewed. */
  leaseMs: number;
  /** How often the primary renews its lease, and the others try to take an expired one. */
  renewMs: number;
  /** How long before its lease could expire on the server the primary stops its primary-only work. */
  marginMs: number;
  /** How often the change feed's connection is checked, and the stored rev compared with the running one. */
  checkMs: number;
}

export const DEFAULT_CLUSTER_TIMINGS: ClusterTimings = { leaseMs: 5000, renewMs: 1000, marginMs: 1500, checkMs: 2000 };

/** The timings; throws SettingsError saying what is wrong with them. */
export function parseClusterTimings(v: unknown): ClusterTimings {
  if (v === undefined || v === null) return DEFAULT_CLUSTER_TIMINGS;
  if (typeof v !== 'object' || Array.isArray(v)) throw new SettingsError('storage.cluster must be an object such as {"leaseMs": 5000}');
  const raw = v as Record<string, unknown>;
  const t = { ...DEFAULT_CLUSTER_TIMINGS };
  for (const key of Object.keys(raw)) {
    if (!(key in t)) throw new SettingsError(`storage.cluster.${key} is not a setting (leaseMs, renewMs, marginMs, checkMs)`);
    const value = raw[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 100 || value > 600_000) {
      throw new SettingsError(`storage.cluster.${key} must be a whole number of milliseconds between 100 and 600000`);
    }
    t[key as keyof ClusterTimings] = value;
  }
  // The primary must get at least one renewal in before it would step down.
  if (t.renewMs * 2 > t.leaseMs - t.marginMs) throw new SettingsError('storage.cluster: renewMs must be at most half of leaseMs - marginMs');
  if (t.marginMs < 200) throw new SettingsError('storage.cluster.marginMs must be at least 200');
  return t;
}
