import assert from 'node:assert/strict';
import { copyFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFileStorage } from '../../src/storage/file/file-storage.js';
import { settingsFor } from './support.js';
import { flowsOf, historyContract, meta } from './history-contract.js';
import { tempDir, removeDir } from '../helpers/dirs.js';
import { captureLog } from '../helpers/log.js';

describe('file storage: revision history', { timeout: 30_000 }, () => {
  let root: string;
  let n = 0;
  const fresh = () => path.join(root, `u${n++}`);
  const openAt = async (dir: string, max = 50) => {
    const captured = captureLog();
    const storage = createFileStorage(settingsFor(dir, { flowHistory: { max } }), captured.log);
    await storage.init();
    return { storage, captured };
  };

  before(async () => {
    root = await tempDir();
  });
  after(async () => {
    await removeDir(root);
  });

  historyContract({
    name: 'file',
    newPlace: async () => fresh(),
    create: (place, historyMax) => createFileStorage(settingsFor(place, { flowHistory: { max: historyMax } }), captureLog().log),
  });

  it('survives a restart unchanged', async () => {
    const dir = fresh();
    const first = await openAt(dir);
    await first.storage.saveFlows({ flows: flowsOf('a'), credentials: { doc: 1 }, revision: meta() });
    await first.storage.saveFlows({ flows: flowsOf('b'), credentials: null, revision: meta() });
    const listed = await first.storage.listRevisions({ limit: 10 });
    await first.storage.close();
    const second = await openAt(dir);
    assert.deepEqual(await second.storage.listRevisions({ limit: 10 }), listed);
    assert.deepEqual((await second.storage.getRevision({ seq: 1 }))?.credentials, { doc: 1 });
    await second.storage.close();
  });

  it('drops the revision of a save that never reached the flows file, and its content', async () => {
    const dir = fresh();
    const first = await openAt(dir);
    const a = await first.storage.saveFlows({ flows: flowsOf('a'), credentials: { doc: 1 }, revision: meta() });
    const b = await first.storage.saveFlows({ flows: flowsOf('b'), credentials: { doc: 2 }, revision: meta() });
    await first.storage.close();
    // The disk as a crash after the history commit leaves it: revision b recorded, flows pair still a.
    await copyFile(path.join(dir, '.flows.json.backup'), path.join(dir, 'flows.json'));
    await copyFile(path.join(dir, '.flows_cred.json.backup'), path.join(dir, 'flows_cred.json'));
    const second = await openAt(dir);
    assert.equal((await second.storage.getFlows()).rev, a.rev);
    const list = await second.storage.listRevisions({ limit: 10 });
    assert.deepEqual(list.map((r) => r.rev), [a.rev]);
    assert.ok(second.captured.messages(40).some((m) => m.includes('interrupted')));
    assert.ok(!(await readdir(path.join(dir, '.history'))).includes(`flows-${b.rev}.json`));
    // The next save continues the history after the one kept.
    const c = await second.storage.saveFlows({ flows: flowsOf('c'), credentials: null, revision: meta() });
    assert.deepEqual((await second.storage.listRevisions({ limit: 10 })).map((r) => [r.rev, r.prevRev]), [[c.rev, a.rev], [a.rev, list[0].prevRev]]);
    await second.storage.close();
  });

  it('records flows written by hand, and a Node-RED user dir without history, as external revisions', async () => {
    const dir = fresh();
    await (await openAt(dir)).storage.close();
    await writeFile(path.join(dir, 'flows.json'), JSON.stringify(flowsOf('from node-red')));
    const first = await openAt(dir);
    const [initial] = await first.storage.listRevisions({ limit: 10 });
    assert.equal(initial.action, 'external');
    assert.equal(initial.rev, (await first.storage.getFlows()).rev);
    await writeFile(path.join(dir, 'flows.json'), JSON.stringify(flowsOf('edited')));
    const list = await first.storage.listRevisions({ limit: 10 });
    assert.deepEqual(list.map((r) => [r.action, r.prevRev]), [['external', initial.rev], ['external', list[1].prevRev]]);
    assert.deepEqual((await first.storage.getRevision({ seq: list[0].seq }))?.flows, flowsOf('edited'));
    await first.storage.close();
  });

  it('an empty user dir has no history and writes nothing', async () => {
    const dir = fresh();
    const { storage } = await openAt(dir);
    assert.deepEqual(await storage.listRevisions({ limit: 10 }), []);
    assert.deepEqual(await readdir(dir), []);
    await storage.close();
  });
});
