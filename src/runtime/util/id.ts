import { randomFillSync } from 'node:crypto';

/**
 * Message and node ids: 16 hex characters from 8 random bytes, as Node-RED makes them.
 * Crypto randomness is drawn in batches so that an id costs a table lookup, not a syscall.
 */
const BATCH_IDS = 512;
const pool = Buffer.allocUnsafe(8 * BATCH_IDS);
let offset = pool.length;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function generateId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const o = offset;
  offset += 8;
  return HEX[pool[o]] + HEX[pool[o + 1]] + HEX[pool[o + 2]] + HEX[pool[o + 3]] +
    HEX[pool[o + 4]] + HEX[pool[o + 5]] + HEX[pool[o + 6]] + HEX[pool[o + 7]];
}
