import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { adminAuth, login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { gitAs, seedRemote, inject, tab } from '../helpers/git-remote.js';

/**
 * README's "Projects in a pipeline": a CI job pushes to git, then, with an automation token, asks
 * Runnel to fetch, previews the deploy of the pushed flows, and pulls them (which deploys). These
 * are exactly the README's curl calls, in order.
 */

describe('Projects: a pipeline pulls and deploys with an automation token', () => {
  let server: TestServer;
  let scratch: string;
  let ciToken: string;
  const as = (token: string) => (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), { ...init, token });
  const runningName = async () => ((await as(await login(server))('flows')).body as Array<{ id: string; name?: string }>).find((n) => n.id === 'n1')?.name;

  before(async () => {
    scratch = await tempDir();
    const bare = await seedRemote(scratch, [tab, inject('first release')]);
    server = await startServer({ editorTheme: { projects: { enabled: true } }, adminAuth: adminAuth() });
    const admin = as(await login(server));
    const cloned = await admin('projects', { method: 'POST', json: { name: 'app', credentialSecret: false, git: { remotes: { origin: { url: pathToFileURL(bare).href } } } } });
    assert.equal(cloned.status, 200, cloned.text);
    const made = await admin('auth/tokens', { method: 'POST', json: { name: 'ci', scope: 'projects.read projects.write flows.write' } });
    assert.equal(made.status, 200, made.text);
    ciToken = made.body.token as string;
    // The CI job's push: a change to the flows, committed and pushed to the remote.
    const ci = gitAs('CI', 'ci@example.test');
    const work = path.join(scratch, 'work');
    await writeFile(path.join(work, 'flows.json'), JSON.stringify([tab, inject('second release')], null, 4));
    ci(work, 'commit', '-q', '-am', 'Second release');
    ci(work, 'push', '-q', bare, 'main');
  });
  after(async () => {
    await server.dispose();
    await removeDir(scratch);
  });

  it('fetches, previews the pushed flows, then pulls and deploys them', async () => {
    const ci = as(ciToken);
    const status = await ci('projects/app/status?remote=true');
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.commits.behind, 1);

    const pushed = await ci('projects/app/files/origin%2Fmain/flows.json');
    assert.equal(pushed.status, 200, pushed.text);
    const preview = await ci('flows/preview', { method: 'POST', json: { flows: JSON.parse(pushed.body.content as string) }, headers: { 'Runtime-API-Version': 'v2', 'Runtime-Deployment-Type': 'nodes' } });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual([preview.body.stop, preview.body.start, preview.body.errors], [['n1'], ['n1'], []]);
    assert.equal(await runningName(), 'first release', 'the preview changed nothing');

    const pulled = await ci('projects/app/pull', { method: 'POST' });
    assert.equal(pulled.status, 204, pulled.text);
    assert.equal(await runningName(), 'second release');
    assert.equal((await ci('projects/app/status')).body.commits.behind, 0);
  });

  it('refuses the pull to a token without projects.write', async () => {
    const admin = as(await login(server));
    const reader = (await admin('auth/tokens', { method: 'POST', json: { name: 'reader', scope: 'projects.read' } })).body.token as string;
    const refused = await as(reader)('projects/app/pull', { method: 'POST' });
    assert.deepEqual([refused.status, refused.body.code], [401, 'insufficient_scope'], refused.text);
  });
});
