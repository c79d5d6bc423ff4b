import type { SharedModules } from '../contract.js';
import type { ContextDb } from './shared-context.js';

/**
 * The shared list of installed node modules, one row per module with the uploaded tarball's
 * bytes. Every change notifies the other instances, which reconcile their user dirs to the list.
 */

/** A table's access, as the shared context has it. */
export function sharedModules(db: ContextDb): SharedModules {
  const t = db.table;
  const changed = { kind: 'modules', origin: db.instanceId } as const;
  return {
    async list() {
      const { rows } = await db.query<{ name: string; record: string }>(`SELECT name, record FROM ${t} ORDER BY name`);
      return rows.map((r) => ({ name: r.name, record: JSON.parse(r.record) as Record<string, unknown> }));
    },
    async put(name, record, tarball) {
      await db.transaction(async (client) => {
        await client.query(
          `INSERT INTO ${t} (name, record, tarball) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO UPDATE SET record = EXCLUDED.record, tarball = CASE WHEN $4 THEN ${t}.tarball ELSE EXCLUDED.tarball END`,
          [name, JSON.stringify(record), tarball ?? null, tarball === undefined],
        );
        await db.notify(client, changed);
      });
    },
    async remove(name) {
      await db.transaction(async (client) => {
        await client.query(`DELETE FROM ${t} WHERE name = $1`, [name]);
        await db.notify(client, changed);
      });
    },
    async tarball(name) {
      const { rows } = await db.query<{ tarball: Buffer | null }>(`SELECT tarball FROM ${t} WHERE name = $1`, [name]);
      return rows[0]?.tarball ?? undefined;
    },
  };
}
