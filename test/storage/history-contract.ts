import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FlowNodeConfig, RevisionMeta, Storage } from '../../src/storage/contract.js';

/**
 * The revision-history part of the Storage contract, written against the interface only so every
 * backend runs it, in the shape of the cluster branch's storage contract: a backend names a new
 * empty place and creates a (not yet initialised) storage on it keeping `historyMax` revisions
 * (`flowHistory.max`).
 */
export interface HistoryBackend {
  name: string;
  newPlace(): Promise<string>;
  create(place: string, historyMax: number): Storage;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export const flowsOf = (label: string): FlowNodeConfig[] => [
  { id: 't1', type: 'tab', label },
  { id: 'n1', type: 'comment', z: 't1', name: label, wires: [] },
];

export const meta = (extra: Partial<RevisionMeta> = {}): RevisionMeta => ({
  action: 'deploy', type: 'full', time: 1_700_000_000_000, user: 'admin', nodeCount: 2, summary: { t1: { added: 2, changed: 0, removed: 0 } }, ...extra,
});

export function historyContract(backend: HistoryBackend): void {
  const open = async (max: number) => {
    const storage = backend.create(await backend.newPlace(), max);
    await storage.init();
    return storage;
  };
  describe(`Storage history contract: ${backend.name}`, () => {
    it('a save with a revision records it with seq, rev, prevRev and the content, newest first', async () => {
      const storage = await open(50);
      try {
        const empty = (await storage.getFlows()).rev;
        const a = await storage.saveFlows({ flows: flowsOf('a'), credentials: { doc: 'A' }, revision: meta() });
        const b = await storage.saveFlows({ flows: flowsOf('b'), credentials: null, revision: meta({ type: 'nodes', user: 'bob' }) });
        const list = await storage.listRevisions({ limit: 10 });
        assert.deepEqual(list.map((r) => [r.seq, r.rev, r.prevRev, r.type, r.user]), [
          [2, b.rev, a.rev, 'nodes', 'bob'],
          [1, a.rev, empty, 'full', 'admin'],
        ]);
        assert.equal(a.rev, sha(JSON.stringify(flowsOf('a'))));
        assert.deepEqual(list[1].summary, meta().summary);
        const first = await storage.getRevision({ seq: 1 });
        assert.deepEqual(first?.flows, flowsOf('a'));
        assert.deepEqual(first?.credentials, { doc: 'A' });
        // A save passing null credentials keeps the stored ones, and the revision holds them too.
        assert.deepEqual((await storage.getRevision({ rev: b.rev }))?.credentials, { doc: 'A' });
      } finally {
        await storage.close();
      }
    });

    it('a save without a revision records none; recordRevision records the stored pair as it is', async () => {
      const storage = await open(50);
      try {
        const { rev } = await storage.saveFlows({ flows: flowsOf('a'), credentials: { doc: 'A' } });
        const before = await storage.listRevisions({ limit: 10 });
        const info = await storage.recordRevision(meta({ action: 'reload', type: 'reload' }));
        assert.equal(info.rev, rev);
        assert.equal(info.prevRev, rev);
        const after = await storage.listRevisions({ limit: 10 });
        assert.equal(after.length, before.length + 1);
        assert.deepEqual(after[0], info);
        assert.deepEqual((await storage.getRevision({ seq: info.seq }))?.credentials, { doc: 'A' });
      } finally {
        await storage.close();
      }
    });

    it('the same content twice shares a rev; lookup by rev finds the newest', async () => {
      const storage = await open(50);
      try {
        const a1 = await storage.saveFlows({ flows: flowsOf('a'), credentials: { doc: 1 }, revision: meta() });
        await storage.saveFlows({ flows: flowsOf('b'), credentials: null, revision: meta() });
        const a2 = await storage.saveFlows({ flows: flowsOf('a'), credentials: { doc: 2 }, revision: meta({ action: 'rollback', restoredSeq: 1 }) });
        assert.equal(a1.rev, a2.rev);
        const found = await storage.getRevision({ rev: a1.rev });
        assert.equal(found?.action, 'rollback');
        assert.equal(found?.restoredSeq, 1);
        assert.deepEqual(found?.credentials, { doc: 2 });
        assert.deepEqual((await storage.getRevision({ seq: 1 }))?.credentials, { doc: 1 });
      } finally {
        await storage.close();
      }
    });

    it('keeps only the newest max revisions; pages with limit and before', async () => {
      const storage = await open(3);
      try {
        for (let i = 0; i < 5; i++) await storage.saveFlows({ flows: flowsOf(`v${i}`), credentials: null, revision: meta() });
        const all = await storage.listRevisions({ limit: 10 });
        assert.equal(all.length, 3);
        const newest = all[0].seq;
        assert.deepEqual(all.map((r) => r.seq), [newest, newest - 1, newest - 2]);
        assert.equal(await storage.getRevision({ seq: newest - 3 }), undefined);
        assert.equal(await storage.getRevision({ rev: sha(JSON.stringify(flowsOf('v0'))) }), undefined);
        assert.deepEqual((await storage.getRevision({ seq: newest - 2 }))?.flows, flowsOf('v2'));
        const page = await storage.listRevisions({ limit: 1, before: newest });
        assert.deepEqual(page.map((r) => r.seq), [newest - 1]);
      } finally {
        await storage.close();
      }
    });

    it('a save refused by compare-and-swap records no revision', async () => {
      const storage = await open(50);
      try {
        await storage.saveFlows({ flows: flowsOf('a'), credentials: null, revision: meta() });
        const before = await storage.listRevisions({ limit: 10 });
        await assert.rejects(
          storage.saveFlows({ flows: flowsOf('b'), credentials: null, expectedRev: 'stale', revision: meta() }),
          (e: Error & { code?: string }) => e.code === 'version_mismatch',
        );
        assert.deepEqual(await storage.listRevisions({ limit: 10 }), before);
      } finally {
        await storage.close();
      }
    });
  });
}
