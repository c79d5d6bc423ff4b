import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adminAuth, eventually, login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { installCapture } from '../helpers/capture.js';
import { Editor, type Entry } from '../helpers/comms.js';

/** An editor that logged in and subscribed as Node-RED's does, waiting for the retained state. */
async function openEditor(server: TestServer, token: string, editors: Editor[]): Promise<Editor> {
  const e = new Editor(server.url);
  editors.push(e);
  await e.send({ auth: token });
  await e.send({ subscribe: 'notification/#' });
  await e.waitFor('notification/runtime-state');
  return e;
}

/** The newest runtime-state notification an editor holds, once it satisfies `check`. */
async function stateWhere(e: Editor, check: (data: Entry['data']) => boolean): Promise<Entry['data']> {
  let found: Entry['data'];
  await eventually(() => {
    found = e.on('notification/runtime-state').at(-1)?.data;
    return found !== undefined && check(found);
  }, 30_000);
  return found;
}

describe('runtime warnings on /comms', { timeout: 120_000 }, () => {
  const editors: Editor[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const e of editors) e.close();
    for (const d of dirs) await removeDir(d);
  });

  it('tells editors when flows are stopped and started, and that a deploy while stopped leaves them stopped', async () => {
    const dir = await tempDir('runnel-notice-');
    dirs.push(dir);
    const settings = { adminAuth: adminAuth(), runtimeState: { enabled: true } };
    let server = await startServer(settings, dir);
    try {
      const token = await login(server);
      const e = await openEditor(server, token, editors);
      assert.equal((await stateWhere(e, (d) => d.state === 'start')).text, undefined);
      assert.equal((await request(server.at('flows/state'), { method: 'POST', json: { state: 'stop' }, token })).status, 200);
      assert.deepEqual(await stateWhere(e, (d) => d.state === 'stop'), { state: 'stop', deploy: false });
      await deploy(server, [{ id: 'i1', type: 'inject', z: 't1', wires: [] }], { tab: 't1', token });
      assert.deepEqual(await stateWhere(e, (d) => d.deploy === true), { state: 'stop', deploy: true });
      // An editor opened now, and one opened after a restart, learn the flows are stopped.
      const late = await openEditor(server, token, editors);
      assert.equal(late.on('notification/runtime-state').at(-1)!.data.state, 'stop');
      await server.stop();
      server = await startServer(settings, dir);
      const token2 = await login(server);
      const afterRestart = await openEditor(server, token2, editors);
      assert.deepEqual(afterRestart.on('notification/runtime-state').at(-1)!.data, { state: 'stop', deploy: false });
      assert.equal((await request(server.at('flows/state'), { method: 'POST', json: { state: 'start' }, token: token2 })).status, 200);
      assert.deepEqual(await stateWhere(afterRestart, (d) => d.state === 'start'), { state: 'start', deploy: false });
    } finally {
      await server.stop();
    }
  });

  it('warns while deployed types are missing, and closes the warning once they are registered', async () => {
    const server = await startServer({ adminAuth: adminAuth() });
    try {
      const token = await login(server);
      const e = await openEditor(server, token, editors);
      await deploy(server, [{ id: 'c1', type: 'test-capture', z: 't1', wires: [] }], { tab: 't1', token });
      const warning = await stateWhere(e, (d) => d.error === 'missing-types');
      assert.deepEqual(warning, {
        state: 'start', deploy: true, type: 'warning', error: 'missing-types', text: 'notification.warnings.missing-types', types: ['test-capture'],
      });
      const late = await openEditor(server, token, editors);
      assert.equal(late.on('notification/runtime-state').at(-1)!.data.error, 'missing-types', 'retained for editors opened later');
      installCapture(server);
      // Without `text` the editor closes its warning.
      assert.deepEqual(await stateWhere(e, (d) => d.error === undefined), { state: 'start', deploy: false });
    } finally {
      await server.dispose();
    }
  });

  it('warns that the credentials could not be decrypted until a deploy replaces them', async () => {
    const dir = await tempDir('runnel-notice-');
    dirs.push(dir);
    const flows = [{ id: 'r1', type: 'http request', z: 't1', method: 'GET', url: 'http://127.0.0.1:9/', wires: [[]] }];
    let server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'first key' }, dir);
    try {
      const token = await login(server);
      await deploy(server, flows, { tab: 't1', token, api: 'v2', credentials: { r1: { user: 'u', password: 'p' } } });
      await server.stop();
      server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'another key' }, dir);
      const token2 = await login(server);
      const e = await openEditor(server, token2, editors);
      assert.deepEqual(e.on('notification/runtime-state').at(-1)!.data, {
        state: 'start', deploy: false, type: 'warning', error: 'credentials_load_failed', text: 'notification.warnings.credentials_load_failed_reset',
      });
      // The flows run without their credentials meanwhile.
      assert.deepEqual((await request(server.at('credentials/http-request/r1'), { token: token2 })).body, {});
      await deploy(server, flows, { tab: 't1', token: token2 });
      assert.deepEqual(await stateWhere(e, (d) => d.deploy === true && d.state === 'start'), { state: 'start', deploy: true });
      // The deploy rewrote the credentials under the new key: the next start reads them.
      await server.stop();
      server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'another key' }, dir);
      const fresh = await openEditor(server, await login(server), editors);
      assert.deepEqual(fresh.on('notification/runtime-state').at(-1)!.data, { state: 'start', deploy: false });
    } finally {
      await server.stop();
    }
  });
});

describe("nodes' warnings and errors on /comms", { timeout: 60_000 }, () => {
  it("reach the editor's debug sidebar as Node-RED's log entries: a function's syntax error at deploy, a warning per message", async () => {
    const server = await startServer();
    const e = new Editor(server.url);
    try {
      await e.send({ subscribe: 'debug' });
      // Subscriptions are handled in order: the retained state proves the first one is in place.
      await e.send({ subscribe: 'notification/#' });
      await e.waitFor('notification/runtime-state');
      await deploy(server, [
        { id: 'fn', type: 'function', z: 't1', name: 'broken', func: 'return msg;;)', outputs: 1, x: 1, y: 1, wires: [] },
        { id: 'inj', type: 'inject', z: 't1', once: true, onceDelay: 0, props: [{ p: 'payload', v: '1', vt: 'str' }], x: 1, y: 2, wires: [['warner']] },
        { id: 'warner', type: 'function', z: 't1', func: 'node.warn("careful: " + msg.payload); return null;', outputs: 1, x: 2, y: 2, wires: [] },
      ], { tab: 't1' });
      const [error] = await e.waitFor('debug');
      assert.deepEqual({ ...error.data, msg: undefined, format: undefined }, { level: 20, id: 'fn', type: 'function', z: 't1', name: 'broken', path: 't1', msg: undefined, format: undefined });
      assert.equal(error.data.format, 'error');
      assert.deepEqual(JSON.parse(error.data.msg), { name: 'SyntaxError', message: "Unexpected token ')'" });
      const [, warning] = await e.waitFor('debug', 2);
      assert.deepEqual(warning.data, { level: 30, id: 'warner', type: 'function', z: 't1', path: 't1', msg: 'careful: 1', format: 'string[10]' });
    } finally {
      e.close();
      await server.dispose();
    }
  });
});
