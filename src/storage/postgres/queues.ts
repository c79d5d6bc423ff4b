import type { StorageChange } from '../contract.js';
import type { ClaimedMessage, QueueDepth, QueueStore } from '../queue-contract.js';
import type { ContextDb } from './shared-context.js';
import { fencedTransaction } from './lease-fence.js';

/**
 * Queues every instance shares: one table, claimed with `FOR UPDATE SKIP LOCKED` so consumers on
 * several instances never wait for each other's rows, woken by a NOTIFY sent in the enqueueing
 * transaction (through the cluster's change feed, so it arrives only once the rows are visible).
 * Leases and back-off are on the database's clock, so instances' clocks need not agree. What
 * primary-only work enqueues is fenced by the primary's lease, as its context writes are.
 */

interface Row {
  seq: string;
  id: string;
  key: string | null;
  body: string;
  attempts: number;
  enqueued_at: Date;
}

export interface QueueDb extends Omit<ContextDb, 'table'> {
  table: string;
  /** The change feed's NOTIFY channel (what `notify` sends on), for statements that notify themselves. */
  channel: string;
  onChange(listener: (change: StorageChange) => void): () => void;
}

export function postgresQueues(db: QueueDb): QueueStore {
  const t = db.table;
  const local = new Set<(queue: string) => void>();
  const announce = (queue: string) => {
    for (const listener of local) listener(queue);
  };
  return {
    async enqueue(queue, items, primaryOnly = false, handOff) {
      if (items.length === 0) return [];
      let left = handOff?.max ?? 0;
      const taken = items.map((i) => i.key === null && left-- > 0);
      // One statement is one transaction: the rows, the hand-off's claims and the notification in a
      // single round trip (the left join runs pg_notify once, whether or not anything was handed off).
      const text = `WITH stored AS (
          INSERT INTO ${t} (queue, id, key, body, attempts, lease_until)
          SELECT $1, u.id, u.key, u.body, CASE WHEN u.taken THEN 1 ELSE 0 END,
                 CASE WHEN u.taken THEN now() + make_interval(secs => $6::float8 / 1000) END
            FROM unnest($2::text[], $3::text[], $4::text[], $5::bool[]) AS u(id, key, body, taken)
          RETURNING seq, id, key, body, attempts, enqueued_at, lease_until IS NOT NULL AS taken)
        SELECT s.seq, s.id, s.key, s.body, s.attempts, s.enqueued_at FROM (SELECT pg_notify($7, $8)) n LEFT JOIN stored s ON s.taken`;
      const values = [
        queue, items.map((i) => i.id), items.map((i) => i.key), items.map((i) => i.body), taken, handOff?.leaseMs ?? 0,
        db.channel, JSON.stringify({ kind: 'queue', name: queue, origin: db.instanceId } satisfies StorageChange),
      ];
      const { rows } = primaryOnly ? await fencedTransaction(db, (client) => client.query<Row>(text, values)) : await db.query<Row>(text, values);
      announce(queue);
      return claimed(rows.filter((r) => r.seq !== null));
    },
    async claim(queue, max, leaseMs) {
      // The head of each key is the key's lowest seq: a later message waits while it is stored.
      const { rows } = await db.query<Row>(
        `UPDATE ${t} m SET lease_until = now() + make_interval(secs => $3::float8 / 1000), attempts = attempts + 1
          WHERE m.seq IN (
            SELECT c.seq FROM ${t} c
             WHERE c.queue = $1 AND c.visible_at <= now() AND (c.lease_until IS NULL OR c.lease_until < now())
               AND (c.key IS NULL OR NOT EXISTS (SELECT 1 FROM ${t} e WHERE e.queue = c.queue AND e.key = c.key AND e.seq < c.seq))
             ORDER BY c.seq LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING m.seq, m.id, m.key, m.body, m.attempts, m.enqueued_at`,
        [queue, max, leaseMs],
      );
      return claimed(rows);
    },
    async renew(queue, seqs, leaseMs) {
      if (seqs.length === 0) return;
      await db.query(`UPDATE ${t} SET lease_until = now() + make_interval(secs => $3::float8 / 1000) WHERE queue = $1 AND seq = ANY($2::bigint[])`, [queue, seqs, leaseMs]);
    },
    async ack(queue, seqs) {
      if (seqs.length === 0) return;
      await db.query(`DELETE FROM ${t} WHERE queue = $1 AND seq = ANY($2::bigint[])`, [queue, seqs]);
    },
    async retry(queue, seq, delayMs) {
      await db.query(
        `UPDATE ${t} SET lease_until = NULL, visible_at = now() + make_interval(secs => $3::float8 / 1000) WHERE queue = $1 AND seq = $2`,
        [queue, seq, delayMs],
      );
      if (delayMs <= 0) announce(queue);
    },
    async purge(queue) {
      return (await db.query(`DELETE FROM ${t} WHERE queue = $1`, [queue])).rowCount ?? 0;
    },
    async list(also) {
      const { rows } = await db.query<{ queue: string; depth: string; in_flight: string; bytes: string; oldest: Date | null }>(
        `SELECT queue, count(*) AS depth, count(*) FILTER (WHERE lease_until > now()) AS in_flight,
                coalesce(sum(octet_length(body)), 0) AS bytes, min(enqueued_at) AS oldest
           FROM ${t} GROUP BY queue`,
      );
      const found = new Map<string, QueueDepth>(
        rows.map((r) => [r.queue, { name: r.queue, depth: Number(r.depth), inFlight: Number(r.in_flight), bytes: Number(r.bytes), oldest: r.oldest?.getTime() ?? null }]),
      );
      for (const name of also) if (!found.has(name)) found.set(name, { name, depth: 0, inFlight: 0, bytes: 0, oldest: null });
      return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
    },
    async size(queue) {
      const { rows } = await db.query<{ depth: string; bytes: string }>(
        `SELECT count(*) AS depth, coalesce(sum(octet_length(body)), 0) AS bytes FROM ${t} WHERE queue = $1`,
        [queue],
      );
      return { depth: Number(rows[0].depth), bytes: Number(rows[0].bytes) };
    },
    onAvailable(listener) {
      local.add(listener);
      const unfollow = db.onChange((change) => {
        if (change.kind === 'queue') listener(change.name);
        // Notifications sent while the feed was down are lost: every queue may have messages.
        else if (change.kind === 'resync') listener('');
      });
      return () => {
        local.delete(listener);
        unfollow();
      };
    },
    async close() {},
  };
}

function claimed(rows: Row[]): ClaimedMessage[] {
  return rows
    .map((r): ClaimedMessage => ({ seq: Number(r.seq), id: r.id, key: r.key, body: r.body, attempts: r.attempts, enqueuedAt: r.enqueued_at.getTime() }))
    .sort((a, b) => a.seq - b.seq);
}
