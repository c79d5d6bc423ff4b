import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { encryptNodeRedBlob } from '../../src/credentials/cipher.js';
import { tempDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

const SECRET = 'a-test-secret';
const v2 = { 'Runtime-API-Version': 'v2' };
const tab = { id: 't1', type: 'tab', label: 'one' };
const node = (extra: Record<string, unknown> = {}) => ({ id: 'n1', type: 'test-capture', z: 't1', x: 1, y: 1, wires: [], ...extra });

const editorView = async (server: TestServer, id = 'n1') => (await request(server.at(`credentials/test-capture/${id}`))).body;

describe('credentials through POST /flows', () => {
  test('inline, map and $ forms; __PWRD__ keeps, blank deletes; never echoed; rev unchanged', async () => {
    const server = await startServer({ credentialSecret: SECRET });
    const capture = installCapture(server);
    try {
      const rev1 = await deploy(server, [tab, node({ credentials: { user: 'alice', password: 'pw1', extra: 'dropped' } })], { api: 'v2' });
      assert.deepEqual(await editorView(server), { user: 'alice', has_password: true });
      assert.deepEqual(capture.credentials.get('n1'), { user: 'alice', password: 'pw1' });
      const flows = await request(server.at('flows'), { headers: v2 });
      assert.equal(JSON.stringify(flows.body).includes('pw1'), false);
      assert.equal(flows.body.flows[1].credentials, undefined);

      const rev2 = await deploy(server, [tab, node({ credentials: { user: 'bob', password: '__PWRD__' } })], { api: 'v2' });
      assert.equal(rev2, rev1, 'credentials are not part of rev');
      assert.deepEqual(capture.credentials.get('n1'), { user: 'bob', password: 'pw1' });

      await deploy(server, [tab, node()], { api: 'v2', credentials: { n1: { user: 'carol', password: 'pw3' } } });
      assert.deepEqual(await editorView(server), { user: 'carol', has_password: true });

      const blob = encryptNodeRedBlob({ n1: { user: 'dave', password: 'pw4' } }, SECRET);
      await deploy(server, [tab, node()], { api: 'v2', credentials: { $: blob } });
      assert.deepEqual(await editorView(server), { user: 'dave', has_password: true });

      await deploy(server, [tab, node({ credentials: { password: ' ' } })], { api: 'v2' });
      assert.deepEqual(await editorView(server), { user: 'dave', has_password: false });

      await deploy(server, [tab, node()], { api: 'v2' });
      assert.deepEqual(await editorView(server), { user: 'dave', has_password: false }, 'a deploy without credentials keeps them');
    } finally {
      await server.dispose();
    }
  });

  test('an undecryptable $ blob is 400 credentials_load_failed and changes nothing', async () => {
    const server = await startServer({ credentialSecret: SECRET });
    installCapture(server);
    try {
      const rev = await deploy(server, [tab, node({ credentials: { user: 'alice', password: 'pw1' } })], { api: 'v2' });
      const credFile = path.join(server.userDir, 'flows_cred.json');
      const before = await readFile(credFile, 'utf8');
      for (const bad of ['0123456789abcdef0123456789abcdefAAAA', encryptNodeRedBlob({ n1: { user: 'x' } }, 'wrong-secret'), 42]) {
        const r = await request(server.at('flows'), { method: 'POST', headers: v2, json: { flows: [tab, node({ name: 'changed' })], credentials: { $: bad } } });
        assert.equal(r.status, 400);
        assert.equal(r.body.code, 'credentials_load_failed');
      }
      assert.deepEqual(await editorView(server), { user: 'alice', has_password: true });
      assert.equal((await request(server.at('flows'), { headers: v2 })).body.rev, rev);
      assert.equal(await readFile(credFile, 'utf8'), before);
    } finally {
      await server.dispose();
    }
  });

  test('credentials of removed nodes are dropped', async () => {
    const server = await startServer({ credentialSecret: SECRET });
    installCapture(server);
    try {
      await deploy(server, [tab, node({ credentials: { user: 'alice', password: 'pw1' } })], { api: 'v2' });
      await deploy(server, [tab], { api: 'v2' });
      await deploy(server, [tab, node()], { api: 'v2' });
      assert.deepEqual(await editorView(server), {});
    } finally {
      await server.dispose();
    }
  });

  test('flows and encrypted credentials survive a restart; nothing secret is in the files in clear', async () => {
    const dir = await tempDir();
    const first = await startServer({ credentialSecret: SECRET }, dir);
    installCapture(first);
    const rev = await deploy(first, [tab, node({ credentials: { user: 'alice', password: 'very-secret-pw' } })], { api: 'v2' });
    await first.stop();
    for (const file of ['flows.json', 'flows_cred.json']) {
      assert.equal((await readFile(path.join(dir, file), 'utf8')).includes('very-secret-pw'), false, file);
    }
    const second = await startServer({ credentialSecret: SECRET }, dir);
    const capture = installCapture(second);
    try {
      assert.equal((await request(second.at('flows'), { headers: v2 })).body.rev, rev);
      assert.deepEqual(await editorView(second), { user: 'alice', has_password: true });
      await capture.waitFor('n1', 0);
      for (let i = 0; i < 100 && !capture.credentials.has('n1'); i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(capture.credentials.get('n1'), { user: 'alice', password: 'very-secret-pw' });
    } finally {
      await second.dispose();
    }
  });

  test('a Node-RED user dir starts unchanged: same flows, same rev, credentials readable', async () => {
    const dir = await tempDir();
    await mkdir(dir, { recursive: true });
    const flows = [tab, node()];
    // Node-RED writes flows.json pretty or compact; the rev is always the hash of the compact form.
    await writeFile(path.join(dir, 'flows.json'), JSON.stringify(flows, null, 4));
    await writeFile(path.join(dir, 'flows_cred.json'), JSON.stringify({ $: encryptNodeRedBlob({ n1: { user: 'nr-user', password: 'nr-pw' } }, SECRET) }));
    await writeFile(path.join(dir, '.config.runtime.json'), JSON.stringify({ instanceId: 'abc' }));
    const server = await startServer({ credentialSecret: SECRET }, dir);
    installCapture(server);
    try {
      const got = await request(server.at('flows'), { headers: v2 });
      assert.deepEqual(got.body.flows, flows);
      assert.equal(got.body.rev, createHash('sha256').update(JSON.stringify(flows)).digest('hex'));
      assert.deepEqual(await editorView(server), { user: 'nr-user', has_password: true });
      await deploy(server, flows, { api: 'v2', rev: got.body.rev });
      const rewritten = await readFile(path.join(dir, 'flows_cred.json'), 'utf8');
      assert.equal(rewritten.includes('nr-pw'), false);
      assert.notEqual(JSON.parse(rewritten).$, undefined === JSON.parse(rewritten).$ ? 'x' : JSON.parse(rewritten).$);
    } finally {
      await server.dispose();
    }
  });
});
