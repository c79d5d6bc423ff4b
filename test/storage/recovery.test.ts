import assert from 'node:assert/strict';
import { copyFile, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFileStorage } from '../../src/storage/file/file-storage.js';
import { credsFileText } from '../../src/storage/file/flow-pair.js';
import { revOf } from '../../src/storage/rev.js';
import type { FlowNodeConfig, FlowsSnapshot } from '../../src/storage/contract.js';
import { readJsonFile, settingsFor, tempFilesIn } from './support.js';
import { tempDir, removeDir } from '../helpers/dirs.js';
import { captureLog } from '../helpers/log.js';

/**
 * A save is: credentials temp written, credentials backup copied, credentials renamed, flows temp
 * written, flows backup copied, flows renamed. Each test writes by hand the files a SIGKILL at one
 * of those points leaves, then opens the dir as a restarted process would.
 */

const F0: FlowNodeConfig[] = [{ id: 't0', type: 'tab' }];
const FA: FlowNodeConfig[] = [{ id: 'tA', type: 'tab' }, { id: 'a1', type: 'inject', z: 'tA' }];
const FB: FlowNodeConfig[] = [{ id: 'tB', type: 'tab' }];
const DOC0 = { plain: { t0: { k: '0' } } };
const DOCA = { plain: { a1: { k: 'A' } } };
const DOCB = { plain: { tB: { k: 'B' } } };
const EMPTY_REV = revOf([]);

describe('crash recovery of the flows/credentials pair', { timeout: 30_000 }, () => {
  let root: string;
  let n = 0;

  before(async () => {
    root = await tempDir();
  });
  after(async () => {
    await removeDir(root);
  });

  /** A dir where save 0 and save A completed, so both backups exist. */
  async function savedTwice(): Promise<string> {
    const dir = path.join(root, `d${n++}`);
    const storage = createFileStorage(settingsFor(dir), captureLog().log);
    await storage.init();
    await storage.saveFlows({ flows: F0, credentials: DOC0 });
    await storage.saveFlows({ flows: FA, credentials: DOCA });
    await storage.close();
    return dir;
  }

  async function reopen(dir: string) {
    const captured = captureLog();
    const storage = createFileStorage(settingsFor(dir), captured.log);
    await storage.init();
    const snap = await storage.getFlows();
    await storage.close();
    return { snap, captured };
  }

  const file = (dir: string, name: string) => path.join(dir, name);
  const credsB = () => credsFileText(DOCB, revOf(FB), revOf(FA), false);
  const expectA = (snap: FlowsSnapshot) => {
    assert.deepEqual(snap.flows, FA);
    assert.deepEqual(snap.credentials, DOCA);
    assert.equal(snap.rev, revOf(FA));
  };

  it('killed after writing the credentials temp file: old pair, temp removed, nothing to report', async () => {
    const dir = await savedTwice();
    await writeFile(file(dir, '.flows_cred.json.0a0b0c0d0e0f.runnel-tmp'), credsB());
    const { snap } = await reopen(dir);
    expectA(snap);
    assert.equal(snap.recovered, undefined);
    assert.deepEqual(await tempFilesIn(dir), []);
  });

  it('killed after the credentials backup was copied: old pair, nothing to report', async () => {
    const dir = await savedTwice();
    await copyFile(file(dir, 'flows_cred.json'), file(dir, '.flows_cred.json.backup'));
    const { snap } = await reopen(dir);
    expectA(snap);
    assert.equal(snap.recovered, undefined);
  });

  for (const flowsBackupCopied of [false, true]) {
    it(`killed after the credentials rename${flowsBackupCopied ? ' and the flows backup copy' : ''}: rolls back to the old pair and repairs the file`, async () => {
      const dir = await savedTwice();
      await copyFile(file(dir, 'flows_cred.json'), file(dir, '.flows_cred.json.backup'));
      await writeFile(file(dir, 'flows_cred.json'), credsB());
      if (flowsBackupCopied) await copyFile(file(dir, 'flows.json'), file(dir, '.flows.json.backup'));
      await writeFile(file(dir, '.flows.json.ffffffffffff.runnel-tmp'), JSON.stringify(FB));
      const { snap, captured } = await reopen(dir);
      expectA(snap);
      assert.equal(snap.recovered, 'restored the credentials from their backup to match the flows');
      assert.deepEqual(captured.messages(40), ['Storage repaired at load: restored the credentials from their backup to match the flows']);
      assert.deepEqual(await readJsonFile(file(dir, 'flows_cred.json')), { $runnel: 1, rev: revOf(FA), data: DOCA });
      const { snap: third } = await reopen(dir);
      expectA(third);
      assert.equal(third.recovered, undefined);
    });
  }

  it('killed after the flows rename: the new pair is complete', async () => {
    const dir = await savedTwice();
    await copyFile(file(dir, 'flows_cred.json'), file(dir, '.flows_cred.json.backup'));
    await writeFile(file(dir, 'flows_cred.json'), credsB());
    await copyFile(file(dir, 'flows.json'), file(dir, '.flows.json.backup'));
    await writeFile(file(dir, 'flows.json'), JSON.stringify(FB));
    const { snap } = await reopen(dir);
    assert.deepEqual(snap, { flows: FB, credentials: DOCB, rev: revOf(FB) });
  });

  it('an unreadable flows file falls back to the backup pair and is kept aside, with an error log', async () => {
    const dir = await savedTwice();
    const storage = createFileStorage(settingsFor(dir), captureLog().log);
    await storage.init();
    await storage.saveFlows({ flows: FB, credentials: DOCB });
    await storage.close();
    await writeFile(file(dir, 'flows.json'), '[{"id":"tB",');
    const { snap, captured } = await reopen(dir);
    expectA(snap);
    assert.equal(snap.recovered, 'the flows file was unreadable; restored the flows from its backup; restored the credentials from their backup to match the flows');
    assert.deepEqual(captured.messages(50), ['Unreadable storage file moved aside']);
    assert.equal(await readFile(file(dir, 'flows.json'), 'utf8'), JSON.stringify(FA));
    const aside = (await readdir(dir)).filter((f) => f.startsWith('flows.json.corrupt-'));
    assert.equal(aside.length, 1);
    assert.equal(await readFile(file(dir, aside[0]!), 'utf8'), '[{"id":"tB",');
  });

  it('an unreadable flows file without a backup gives an empty config and an error, never a crash', async () => {
    const dir = path.join(root, `d${n++}`);
    const storage = createFileStorage(settingsFor(dir), captureLog().log);
    await storage.init();
    await storage.saveFlows({ flows: FA, credentials: DOCA });
    await storage.close();
    await writeFile(file(dir, 'flows.json'), 'not json');
    const { snap, captured } = await reopen(dir);
    assert.deepEqual(snap.flows, []);
    assert.equal(snap.rev, EMPTY_REV);
    assert.match(snap.recovered ?? '', /^the flows file was unreadable and has no usable backup; starting with no flows/);
    assert.deepEqual(captured.messages(50), ['Unreadable storage file moved aside', 'No usable flows backup: starting with an empty configuration']);
  });

  it('an unreadable credentials file falls back to its backup', async () => {
    const dir = await savedTwice();
    await writeFile(file(dir, 'flows_cred.json'), '{"$runn');
    const { snap } = await reopen(dir);
    assert.deepEqual(snap.flows, FA);
    assert.deepEqual(snap.credentials, DOC0);
    assert.equal(snap.recovered, 'restored the credentials from their backup to match the flows');
    assert.deepEqual(await readJsonFile(file(dir, 'flows_cred.json')), { $runnel: 1, rev: revOf(FA), data: DOC0 });
  });

  it('a flows file edited by hand keeps the newest credentials instead of rolling back', async () => {
    const dir = await savedTwice();
    const edited: FlowNodeConfig[] = [...FA, { id: 'a2', type: 'debug', z: 'tA' }];
    await writeFile(file(dir, 'flows.json'), JSON.stringify(edited, null, 2));
    const { snap } = await reopen(dir);
    assert.deepEqual(snap.flows, edited);
    assert.deepEqual(snap.credentials, DOCA);
    assert.equal(snap.recovered, 'the flows file does not match the credentials file (edited outside Runnel?); kept both');
    assert.deepEqual(await readJsonFile(file(dir, 'flows_cred.json')), { $runnel: 1, rev: revOf(edited), data: DOCA });
    assert.equal((await reopen(dir)).snap.recovered, undefined);
  });

  it('the first save over a Node-RED dir, killed after the credentials rename, restores the Node-RED file', async () => {
    const dir = path.join(root, `d${n++}`);
    const nodeRedCreds = JSON.stringify({ $: 'aabbccddeeff00112233445566778899AAAA' });
    const captured = captureLog();
    const storage = createFileStorage(settingsFor(dir), captured.log);
    await storage.init();
    await storage.close();
    await writeFile(file(dir, 'flows.json'), JSON.stringify(FA, null, 4));
    await writeFile(file(dir, 'flows_cred.json'), nodeRedCreds);
    await copyFile(file(dir, 'flows_cred.json'), file(dir, '.flows_cred.json.backup'));
    await writeFile(file(dir, 'flows_cred.json'), credsB());
    const { snap } = await reopen(dir);
    assert.deepEqual(snap.flows, FA);
    assert.deepEqual(snap.credentials, JSON.parse(nodeRedCreds));
    assert.equal(await readFile(file(dir, 'flows_cred.json'), 'utf8'), nodeRedCreds);
  });

  it('a hand edit after migrating a Node-RED dir does not bring back the Node-RED credentials backup', async () => {
    const dir = path.join(root, `d${n++}`);
    const storage = createFileStorage(settingsFor(dir), captureLog().log);
    await storage.init();
    await writeFile(file(dir, 'flows.json'), JSON.stringify(F0));
    await writeFile(file(dir, 'flows_cred.json'), JSON.stringify({ t0: { k: 'node-red' } }));
    await storage.saveFlows({ flows: FA, credentials: DOCA });
    await storage.close();
    assert.deepEqual(await readJsonFile(file(dir, '.flows_cred.json.backup')), { t0: { k: 'node-red' } });
    await writeFile(file(dir, 'flows.json'), JSON.stringify(FB));
    const { snap } = await reopen(dir);
    assert.deepEqual(snap.flows, FB);
    assert.deepEqual(snap.credentials, DOCA);
  });
});
