import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adminAuth, eventually, login, READER_PASSWORD, startServer, type TestServer } from '../helpers/server.js';
import { Editor, type Entry } from '../helpers/comms.js';

const multiplayer = { editorTheme: { multiplayer: { enabled: true } } };

/** An editor as RED.multiplayer starts one: subscribed to multiplayer/#, then `connect` with its own session id. */
async function join(editors: Editor[], url: string, session: string, token?: string): Promise<{ editor: Editor; self: string; init: Entry }> {
  const editor = new Editor(url);
  editors.push(editor);
  if (token) await editor.send({ auth: token });
  await editor.send({ subscribe: 'multiplayer/#' });
  await editor.send({ topic: 'multiplayer/connect', data: { session } });
  const [init] = await editor.waitFor('multiplayer/init');
  return { editor, self: init.data.session as string, init };
}

describe('multiplayer presence on one instance', { timeout: 60_000 }, () => {
  let server: TestServer;
  const editors: Editor[] = [];

  before(async () => {
    server = await startServer(multiplayer);
  });
  after(async () => {
    for (const e of editors) e.close();
    await server.dispose();
  });

  it('tells each editor who else is there, where they are, and when they leave', async () => {
    const a = await join(editors, server.url, 'editorA1');
    assert.match(a.self, /^PUB[a-f0-9]{16}PUB$/);
    assert.deepEqual(a.init.data.sessions.map((s: { session: string }) => s.session), [a.self]);
    assert.equal(a.init.data.sessions[0].user.anonymous, true);
    assert.match(a.init.data.sessions[0].user.username, /^Anon \d+$/);

    const b = await join(editors, server.url, 'editorB1');
    assert.deepEqual(new Set(b.init.data.sessions.map((s: { session: string }) => s.session)), new Set([a.self, b.self]));
    const [added] = await a.editor.waitFor('multiplayer/connection-added');
    assert.equal(added.data.session, b.self);
    // Nobody learns another editor's own session id, which would let them resume it.
    assert.ok(!JSON.stringify(a.editor.entries).includes('editorB1'));

    await b.editor.send({ topic: 'multiplayer/location', data: { workspace: 'tab1', node: 'n1', cursor: { x: 10, y: 20 } } });
    const [moved] = await a.editor.waitFor('multiplayer/location');
    assert.deepEqual(moved.data, { session: b.self, workspace: 'tab1', node: 'n1', cursor: { x: 10, y: 20 } });
    // A location Node-RED would refuse (markup for an id) is not passed on.
    await b.editor.send({ topic: 'multiplayer/location', data: { workspace: '<img src=x>' } });
    await b.editor.send({ subscribe: 'notification/#' });
    await b.editor.waitFor('notification/runtime-state');
    assert.equal(a.editor.on('multiplayer/location').length, 1);
    assert.equal(b.editor.on('multiplayer/location').length, 0, 'an editor is not sent its own location');

    b.editor.close();
    const [removed] = await a.editor.waitFor('multiplayer/connection-removed');
    assert.deepEqual(removed.data, { session: b.self });

    // The editor reconnecting with its id keeps its public id (Node-RED keeps it 30 s).
    const again = await join(editors, server.url, 'editorB1');
    assert.equal(again.self, b.self);

    await again.editor.send({ topic: 'multiplayer/disconnect', data: { session: 'editorB1' } });
    const removals = await a.editor.waitFor('multiplayer/connection-removed', 2);
    assert.deepEqual(removals[1].data, { session: b.self, disconnected: true });
  });

  it('ignores a connect whose session id is not alphanumeric', () => assertNoInit(editors, server.url, '../x'));
});

describe('multiplayer presence with adminAuth', { timeout: 60_000 }, () => {
  let server: TestServer;
  const editors: Editor[] = [];

  before(async () => {
    server = await startServer({ ...multiplayer, adminAuth: adminAuth() });
  });
  after(async () => {
    for (const e of editors) e.close();
    await server.dispose();
  });

  it('shows a logged-in user by name, and never hands their session to another user', async () => {
    const admin = await join(editors, server.url, 'adminSession', await login(server));
    assert.deepEqual(admin.init.data.sessions[0].user, { username: 'admin' });
    admin.editor.close();
    await eventually(() => server.instance.app.comms!.size === 0);
    const reader = await join(editors, server.url, 'adminSession', await login(server, 'reader', READER_PASSWORD, 'read'));
    assert.notEqual(reader.self, admin.self);
    assert.deepEqual(reader.init.data.sessions.map((s: { user: unknown }) => s.user), [{ username: 'reader' }]);
  });
});

describe('multiplayer presence switched off (the default)', { timeout: 60_000 }, () => {
  let server: TestServer;
  const editors: Editor[] = [];

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    for (const e of editors) e.close();
    await server.dispose();
  });

  it('answers no connect', () => assertNoInit(editors, server.url, 'abc'));
});

/** Sends a connect for `session`, then waits for the runtime-state notice that follows it: no init came before it. */
async function assertNoInit(editors: Editor[], url: string, session: string): Promise<void> {
  const e = new Editor(url);
  editors.push(e);
  await e.send({ subscribe: 'multiplayer/#' });
  await e.send({ topic: 'multiplayer/connect', data: { session } });
  await e.send({ subscribe: 'notification/#' });
  await e.waitFor('notification/runtime-state');
  assert.equal(e.on('multiplayer/init').length, 0);
}
