import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

/** POST /projects {name, copy}: the editor's "copy project" choice, through the HTTP API. */

const GIT_USER = { git: { user: { name: 'Ada Tester', email: 'ada@example.test' } } };
const tab = { id: 't1', type: 'tab', label: 'Flow 1' };
const httpRequest = { id: 'h1', type: 'http request', z: 't1', name: 'in the source', method: 'GET', url: 'http://127.0.0.1:1/', authType: 'basic', wires: [] };

describe('Projects: copying a project', () => {
  let server: TestServer;
  const call = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);

  before(async () => {
    server = await startServer({ editorTheme: { projects: { enabled: true } } });
    assert.equal((await call('settings/user', { method: 'POST', json: GIT_USER })).status, 204);
    assert.equal((await call('projects', { method: 'POST', json: { name: 'source', files: { flow: 'flows.json' }, credentialSecret: 'source-secret' } })).status, 200);
    await deploy(server, [tab, httpRequest], { api: 'v2', credentials: { h1: { user: 'bob', password: 'pw' } } });
    assert.equal((await call('projects/source/stage', { method: 'POST', json: { files: ['flows.json', 'flows_cred.json'] } })).status, 200);
    assert.equal((await call('projects/source/commit', { method: 'POST', json: { message: 'Source flows' } })).status, 200);
  });
  after(() => server.dispose());

  it('copies the project with its history and credential secret, and opens the copy with its flows and credentials', async () => {
    const copied = await call('projects', { method: 'POST', json: { name: 'copied', copy: 'source' } });
    assert.equal(copied.status, 200, copied.text);
    assert.equal(copied.body.name, 'copied');
    assert.deepEqual(copied.body.files, { package: 'package.json', flow: 'flows.json', credentials: 'flows_cred.json' });
    assert.equal(copied.body.settings.credentialsEncrypted, true);
    assert.deepEqual((await call('projects')).body, { projects: ['copied', 'source'], active: 'copied' });
    assert.equal((await call('flows')).body.find((n: { id: string }) => n.id === 'h1')?.name, 'in the source');
    assert.equal((await call('credentials/http-request/h1')).body.user, 'bob', 'the copy\'s credentials open with the source\'s secret');
    const commits = await call('projects/copied/commits');
    assert.deepEqual(commits.body.commits.map((c: { subject: string }) => c.subject), ['Source flows', 'Create project']);
  });

  it('leaves the source as it was when the copy changes', async () => {
    await deploy(server, [tab, { ...httpRequest, name: 'in the copy' }]);
    assert.equal((await call('projects/copied/status')).body.files['flows.json'].status, ' M');
    assert.equal((await call('projects/source', { method: 'PUT', json: { active: true } })).status, 200);
    assert.equal((await call('flows')).body.find((n: { id: string }) => n.id === 'h1')?.name, 'in the source');
    assert.equal((await call('projects/source/status')).body.files['flows.json'].status, undefined);
  });

  it('answers Node-RED\'s codes for a missing source, a name taken and an invalid name, and copies nothing', async () => {
    const cases: Array<[unknown, unknown, string]> = [
      ['other', 'nothing-here', 'project_not_found'],
      ['copied', 'source', 'project_exists'],
      ['../escape', 'source', 'invalid_project_name'],
      ['other', '../source', 'invalid_project_name'],
      ['other', 42, 'invalid_project_name'],
    ];
    for (const [name, copy, code] of cases) {
      const res = await call('projects', { method: 'POST', json: { name, copy } });
      assert.deepEqual([res.status, res.body.code], [400, code], `${JSON.stringify({ name, copy })}: ${res.text}`);
    }
    assert.deepEqual((await call('projects')).body, { projects: ['copied', 'source'], active: 'source' });
  });
});
