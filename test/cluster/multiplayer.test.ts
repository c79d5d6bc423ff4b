import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { Editor, type Entry } from '../helpers/comms.js';
import { ADMIN_PASSWORD, READER_PASSWORD, eventually, request } from '../helpers/server.js';

/** Multiplayer presence across three instances: users on different instances see each other. */

async function token(node: ClusterInstance, username: string, password: string, scope: string): Promise<string> {
  const r = await request(node.at('auth/token'), { method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope, username, password } });
  return r.body.access_token as string;
}

describe('cluster: multiplayer presence spans the instances', { timeout: 120_000 }, () => {
  let nodes: ClusterInstance[];
  const editors: Editor[] = [];
  const suite = clusterSuite('multiplayer', 3, { editorTheme: { multiplayer: { enabled: true } } });

  const join = async (node: ClusterInstance, auth: string, session: string) => {
    const editor = new Editor(node.url);
    editors.push(editor);
    await editor.send({ auth });
    await editor.send({ subscribe: 'multiplayer/#' });
    await editor.send({ topic: 'multiplayer/connect', data: { session } });
    const [init] = await editor.waitFor('multiplayer/init');
    return { editor, self: init.data.session as string, init };
  };
  const sessionsOf = (init: Entry) => new Map((init.data.sessions as { session: string; user: { username: string } }[]).map((s) => [s.session, s.user.username]));

  before(() => {
    nodes = suite.nodes;
  });
  after(() => {
    for (const e of editors) e.close();
  });

  it('shows users on other instances, their moves and their leaving; drops a killed instance\'s users within 12 s (6 s of silence, a 2 s sweep, load)', async () => {
    const admin = await join(nodes[0]!, await token(nodes[0]!, 'admin', ADMIN_PASSWORD, '*'), 'adminPage');
    const reader = await join(nodes[1]!, await token(nodes[1]!, 'reader', READER_PASSWORD, 'read'), 'readerPage');
    const [added] = await admin.editor.waitFor('multiplayer/connection-added');
    assert.deepEqual(added.data, { session: reader.self, user: { username: 'reader' } });

    await reader.editor.send({ topic: 'multiplayer/location', data: { workspace: 'tab1', cursor: { x: 5, y: 6 } } });
    const [moved] = await admin.editor.waitFor('multiplayer/location');
    assert.deepEqual(moved.data, { session: reader.self, workspace: 'tab1', cursor: { x: 5, y: 6 } });

    // An editor joining a third instance is told of both, with where the reader is.
    const late = await join(nodes[2]!, await token(nodes[2]!, 'admin', ADMIN_PASSWORD, '*'), 'latePage');
    assert.deepEqual(sessionsOf(late.init), new Map([[late.self, 'admin'], [admin.self, 'admin'], [reader.self, 'reader']]));
    const readerThere = (late.init.data.sessions as { session: string; location?: unknown }[]).find((s) => s.session === reader.self);
    assert.deepEqual(readerThere?.location, { workspace: 'tab1', cursor: { x: 5, y: 6 } });

    // A new instance asks the others for their sessions: the editors that knew them list them once still.
    const fourth = await suite.cluster.add('node3');
    const onFourth = await join(fourth, await token(fourth, 'admin', ADMIN_PASSWORD, '*'), 'fourthPage');
    assert.equal(sessionsOf(onFourth.init).get(reader.self), 'reader');
    // The reader's instance relays in order: once its next move arrives, its answers to the hello have.
    await reader.editor.send({ topic: 'multiplayer/location', data: { workspace: 'tab2' } });
    await admin.editor.waitFor('multiplayer/location', 2);
    assert.equal(admin.editor.on('multiplayer/connection-added').filter((e) => e.data.session === reader.self).length, 1);
    onFourth.editor.close();

    // A page closed on one instance leaves the others' lists at once.
    late.editor.close();
    await eventually(() => admin.editor.on('multiplayer/connection-removed').some((e) => e.data.session === late.self));

    // A killed instance says nothing: its users go when its beats stop.
    const killed = Date.now();
    nodes[1]!.process.child.kill('SIGKILL');
    await eventually(() => admin.editor.on('multiplayer/connection-removed').some((e) => e.data.session === reader.self), 30_000);
    const ms = Date.now() - killed;
    console.log(`a killed instance's user left the other editors ${ms} ms after the kill`);
    assert.ok(ms < 12_000, `${ms} ms`);
  });
});
