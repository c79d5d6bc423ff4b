import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClusterMember } from '../../../src/runtime/cluster/cluster-member.js';
import type { InstanceRecord, SharedStorage } from '../../../src/storage/contract.js';
import { captureLog } from '../../helpers/log.js';

const record = (id: string): InstanceRecord => ({ id, url: `http://${id}/`, version: '1', rev: 'r', state: 'start', primary: false, lastSeen: new Date().toISOString(), modules: {} });

/** Shared storage whose instance list the test sets, counting the reads. */
function fakeShared(list: () => InstanceRecord[]) {
  const reads = { n: 0 };
  const shared = {
    instanceId: 'a',
    campaign: () => async () => undefined,
    heartbeat: async () => undefined,
    listInstances: async () => {
      reads.n++;
      return list();
    },
    leave: async () => undefined,
  } as unknown as SharedStorage;
  return { shared, reads };
}

describe('ClusterMember', () => {
  // A socket.io session's requests that land on an instance whose list lacks the session's owner
  // (started less than a heartbeat ago) were answered "unknown session": the client's polling failed.
  it('finds an instance that joined since the last read by reading the list again, at most once per quarter second', async () => {
    let list = [record('a')];
    let now = 0;
    const { shared, reads } = fakeShared(() => list);
    const member = new ClusterMember(shared, {
      log: captureLog().log, describe: () => ({ url: 'http://a/', version: '1', rev: 'r', state: 'start', primary: false, modules: {} }), setPrimary: async () => undefined, now: () => now,
    });
    member.start();
    try {
      assert.deepEqual((await member.instances()).map((i) => i.id), ['a']);
      list = [record('a'), record('c')];
      assert.deepEqual((await member.instances()).map((i) => i.id), ['a'], 'the list as last read');
      now += 300;
      const before = reads.n;
      const [one, two] = await Promise.all([member.reread(), member.reread()]);
      assert.deepEqual(one.map((i) => i.id), ['a', 'c']);
      assert.deepEqual(two.map((i) => i.id), ['a', 'c']);
      assert.equal(reads.n, before + 1, 'two rereads at once share one read');
      await member.reread();
      assert.equal(reads.n, before + 1, 'a reread within 250 ms of the last read reads nothing');
    } finally {
      await member.stop();
    }
  });
});
