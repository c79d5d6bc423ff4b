import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { captureLog } from '../helpers/log.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { createPostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import type { Storage } from '../../src/storage/contract.js';
import { Projects } from '../../src/projects/projects.js';
import { SharedRepos } from '../../src/projects/cluster/shared-repos.js';
import type { RunnelError } from '../../src/base/errors.js';

/**
 * Two instances' clones of one stored project, with the second's commit made while the first was
 * on an older version: the stale commit is refused whole and the clone takes the kept one.
 */

const USER = { name: 'Ada Tester', email: 'ada@example.test' };

describe('cluster: two writes at once to a project', { timeout: 60_000 }, () => {
  let pg: TestPostgres;
  let root: string;
  const storages: Storage[] = [];
  const instance = async (id: string) => {
    const storage = createPostgresStorage({ url: pg.url, schema: 'race', poolSize: 2 }, id, captureLog().log);
    await storage.init();
    storages.push(storage);
    const projects = new Projects(path.join(root, id), undefined);
    await projects.init();
    return { projects, repos: new SharedRepos(projects, storage.shared!.projects, captureLog().log) };
  };
  const log = (projects: Projects) => execFileSync('git', ['log', '--format=%s', 'main'], { cwd: path.join(projects.dir, 'p'), encoding: 'utf8' });
  const commit = async (projects: Projects, name: string) => {
    const repo = await projects.repository('p');
    await writeFile(path.join(repo.dir, 'flows.json'), JSON.stringify([{ id: 'n1', type: 'inject', name }]));
    await repo.stage(['flows.json']);
    await repo.commit(name, USER);
  };

  before(async () => {
    pg = await startPostgres();
    root = await tempDir();
  });
  after(async () => {
    for (const s of storages) await s.close();
    await pg?.dispose();
    await removeDir(root);
  });

  it('refuses the commit made on an older version with project_version_mismatch, and the clone follows the kept one', async () => {
    const a = await instance('a');
    const b = await instance('b');
    await a.repos.run(() => a.projects.create({ name: 'p', files: { flow: 'flows.json' } }, USER));
    let bDone!: () => void;
    const bCommitted = new Promise<void>((resolve) => (bDone = resolve));
    // a's operation starts on the stored version, then b commits and saves before a does.
    const stale = a.repos.run(async () => {
      await bCommitted;
      await commit(a.projects, 'from a');
    });
    await b.repos.run(() => commit(b.projects, 'from b'));
    bDone();
    await assert.rejects(stale, (err: RunnelError) => err.code === 'project_version_mismatch');
    assert.equal(log(b.projects), 'from b\nCreate project\n');
    await a.repos.run(async () => undefined);
    assert.equal(log(a.projects), 'from b\nCreate project\n');
    await a.repos.run(() => commit(a.projects, 'from a again'));
    await b.repos.run(async () => undefined);
    assert.equal(log(b.projects), 'from a again\nfrom b\nCreate project\n');
  });
});
