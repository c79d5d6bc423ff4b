import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { decryptNodeRedBlob } from '../../src/credentials/nodered-cipher.js';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

/**
 * A project's credentials file is committed: it is kept as Node-RED writes it ({"$": blob} under
 * the project's secret, or the plain map), and a deploy that changes no credential leaves it as it
 * was, so commits carry no credential-file noise.
 */

const GIT_USER = { git: { user: { name: 'Ada Tester', email: 'ada@example.test' } } };
const tab = { id: 't1', type: 'tab', label: 'Flow 1' };
const httpRequest = (name: string) => ({ id: 'h1', type: 'http request', z: 't1', name, method: 'GET', url: 'http://127.0.0.1:1/', authType: 'basic', wires: [] });

async function changedFiles(server: TestServer, project: string): Promise<string[]> {
  const status = await request(server.at(`projects/${project}/status`));
  assert.equal(status.status, 200, status.text);
  return Object.entries(status.body.files as Record<string, { status?: string }>).filter(([, f]) => f.status !== undefined).map(([name]) => name).sort();
}

async function commitAll(server: TestServer, project: string): Promise<void> {
  assert.equal((await request(server.at(`projects/${project}/stage`), { method: 'POST', json: { files: await changedFiles(server, project) } })).status, 200);
  const committed = await request(server.at(`projects/${project}/commit`), { method: 'POST', json: { message: 'Deployed' } });
  assert.equal(committed.status, 200, committed.text);
}

for (const [label, secret] of [['encrypted with the project\'s secret', 'project-secret'], ['in clear (credentialSecret false)', false]] as const) {
  describe(`Projects: the credentials file ${label}`, () => {
    let server: TestServer;
    let credsFile: string;
    before(async () => {
      server = await startServer({ editorTheme: { projects: { enabled: true } } });
      assert.equal((await request(server.at('settings/user'), { method: 'POST', json: GIT_USER })).status, 204);
      const created = await request(server.at('projects'), { method: 'POST', json: { name: 'creds', files: { flow: 'flows.json' }, credentialSecret: secret } });
      assert.equal(created.status, 200, created.text);
      credsFile = path.join(server.userDir, 'projects', 'creds', 'flows_cred.json');
    });
    after(() => server.dispose());

    it('is written in Node-RED\'s format when a credential changes', async () => {
      await deploy(server, [tab, httpRequest('first')], { api: 'v2', credentials: { h1: { user: 'bob', password: 'pw' } } });
      assert.deepEqual(await changedFiles(server, 'creds'), ['flows.json', 'flows_cred.json']);
      const text = await readFile(credsFile, 'utf8');
      const doc = JSON.parse(text) as Record<string, unknown>;
      const map = secret === false ? doc : decryptNodeRedBlob(doc.$ as string, secret);
      assert.deepEqual(map, { h1: { user: 'bob', password: 'pw' } });
      assert.equal(text, JSON.stringify(doc, null, 4), 'pretty-printed, as Node-RED writes a project\'s files');
      await commitAll(server, 'creds');
    });

    it('stays byte-identical over deploys that change no credential, so git shows the flows file alone', async () => {
      const before = await readFile(credsFile, 'utf8');
      await deploy(server, [tab, httpRequest('second')]);
      await deploy(server, [tab, httpRequest('third')]);
      assert.equal(await readFile(credsFile, 'utf8'), before);
      assert.deepEqual(await changedFiles(server, 'creds'), ['flows.json']);
      assert.equal((await request(server.at('credentials/http-request/h1'))).body.user, 'bob');
    });
  });
}
