import type pg from 'pg';
import { LeaseLostError } from '../lease-lost.js';

/**
 * Writes of primary-only work commit only inside the term of the lease they were made under. The
 * transaction ends by locking the lease row for share: a takeover (which updates the row) waits
 * until the write has committed, and a write after a takeover finds another holder or epoch and is
 * rolled back. The lock is held for the COMMIT's round trip; a transaction stranded on a dead link
 * is ended by the server after this long idle, so it cannot hold off a takeover.
 */
const FENCED_IDLE_MS = 1000;

export interface LeaseRef {
  /** The lease table. */
  table: string;
  /** The epoch of the lease this instance holds; undefined when it holds none. */
  epoch(): number | undefined;
}

interface FencedDb {
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  lease: LeaseRef;
  instanceId: string;
}

/**
 * Runs `work` in a transaction fenced by the lease this instance holds now: refused at once
 * (LeaseLostError) without one, rolled back with LeaseLostError if the lease has passed on by the
 * end of the transaction.
 */
export async function fencedTransaction<T>(db: FencedDb, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const epoch = db.lease.epoch();
  if (epoch === undefined) throw new LeaseLostError('this instance is not the primary');
  return db.transaction(async (client) => {
    await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${FENCED_IDLE_MS}`);
    const result = await work(client);
    const { rowCount } = await client.query(
      `SELECT 1 FROM ${db.lease.table} WHERE id = 1 AND holder = $1 AND epoch = $2 AND expires > clock_timestamp() FOR SHARE`,
      [db.instanceId, epoch],
    );
    if (rowCount !== 1) throw new LeaseLostError(`the primary's lease (epoch ${epoch}) has passed to another instance or expired`);
    return result;
  });
}
