import { createHash } from 'node:crypto';

/**
 * A configuration's rev: the SHA-256 hex of its compact JSON. Every backend computes it the same
 * way, so a rev read from one instance (or one backend) means the same flows everywhere.
 */

export function revOf(flows: unknown[]): string {
  return hashJson(JSON.stringify(flows));
}

/** The rev of flows already serialised compactly (as text, or as its UTF-8 bytes). */
export function hashJson(json: string | Uint8Array): string {
  return createHash('sha256').update(json).digest('hex');
}
