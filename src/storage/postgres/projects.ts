import { RunnelError } from '../../base/errors.js';
import type { SharedProjects, StoredProject } from '../contract.js';
import type { ContextDb } from './shared-context.js';

/**
 * Every project's refs, one row per project with its version, the objects each save added as a
 * git bundle in `<table>_bundles`, and the active project in `<table>_state`. A save is a
 * compare-and-swap on the version, in the transaction that stores its bundle and notifies the
 * other instances, so a notification means the new objects are there.
 */
export function sharedProjects(db: Omit<ContextDb, 'lease'>): SharedProjects {
  const t = db.table;
  const bundles = `${t}_bundles`;
  const state = `${t}_state`;
  const changed = { kind: 'projects', origin: db.instanceId } as const;
  const stale = (name: string) =>
    new RunnelError('project_version_mismatch', `Project ${name} was changed through another instance meanwhile: nothing was saved here; look at it again and repeat the change`);
  return {
    async versions() {
      const { rows } = await db.query<{ name: string; version: string }>(`SELECT name, version FROM ${t}`);
      const active = (await db.query<{ active: string | null }>(`SELECT active FROM ${state} WHERE id = 1`)).rows[0]?.active ?? undefined;
      return { versions: Object.fromEntries(rows.map((r) => [r.name, Number(r.version)])), active };
    },
    async get(name) {
      const { rows } = await db.query<{ version: string; refs: string; head: string; config: string; entry: string }>(
        `SELECT version, refs, head, config, entry FROM ${t} WHERE name = $1`, [name]);
      const r = rows[0];
      if (r === undefined) return undefined;
      return {
        name, version: Number(r.version), refs: JSON.parse(r.refs) as StoredProject['refs'], head: r.head,
        config: JSON.parse(r.config) as StoredProject['config'], entry: JSON.parse(r.entry) as StoredProject['entry'],
      };
    },
    async bundles(name, after) {
      const { rows } = await db.query<{ bundle: Buffer }>(`SELECT bundle FROM ${bundles} WHERE name = $1 AND version > $2 ORDER BY version`, [name, after]);
      return rows.map((r) => r.bundle);
    },
    save(project, bundle, base) {
      return db.transaction(async (client) => {
        const values = [project.name, JSON.stringify(project.refs), project.head, JSON.stringify(project.config), JSON.stringify(project.entry)];
        const { rows } = base === 0
          ? await client.query<{ version: string }>(
            `INSERT INTO ${t} (name, version, refs, head, config, entry) VALUES ($1, 1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING RETURNING version`, values)
          : await client.query<{ version: string }>(
            `UPDATE ${t} SET version = version + 1, refs = $2, head = $3, config = $4, entry = $5 WHERE name = $1 AND version = $6 RETURNING version`, [...values, base]);
        if (rows[0] === undefined) {
          if (base === 0) throw new RunnelError('project_exists', `A project named ${project.name} already exists`);
          throw stale(project.name);
        }
        const version = Number(rows[0].version);
        if (bundle !== undefined) await client.query(`INSERT INTO ${bundles} (name, version, bundle) VALUES ($1, $2, $3)`, [project.name, version, bundle]);
        await db.notify(client, changed);
        return version;
      });
    },
    async remove(name, base) {
      await db.transaction(async (client) => {
        const { rowCount } = await client.query(`DELETE FROM ${t} WHERE name = $1 AND version = $2`, [name, base]);
        if (rowCount === 0) throw stale(name);
        await db.notify(client, changed);
      });
    },
    async setActive(name) {
      await db.transaction(async (client) => {
        await client.query(`UPDATE ${state} SET active = $1 WHERE id = 1`, [name ?? null]);
        await db.notify(client, changed);
      });
    },
  };
}
