import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { login, request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { COMPAT_FIXTURES, TAB, capture, flowNode } from './support.js';
import { adminAuth } from '../helpers/users.js';
import { deploy } from '../helpers/deploy.js';

describe('compat: loading a multi-set module from nodesDir', { timeout: 30_000 }, () => {
  let server: TestServer;
  let cap: Capture;
  let admin: string;
  let reader: string;
  before(async () => {
    server = await startServer({ nodesDir: [COMPAT_FIXTURES], adminAuth: adminAuth(), compatClassySecret: 'from-settings' });
    cap = installCapture(server);
    admin = await login(server);
    reader = await login(server, 'reader', 'reader-password-1', 'read');
  });
  after(() => server.dispose());

  it('loads every set of the module (">=3.0.0" accepted) with its types', async () => {
    const res = await request(server.at('nodes/node-red-contrib-compat-multi'), { token: admin });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.version, '1.2.3');
    const sets = Object.fromEntries(res.body.nodes.map((s: { name: string }) => [s.name, s]));
    assert.deepEqual(Object.keys(sets).sort(), ['admin', 'behave', 'classy', 'context', 'i18n', 'remote']);
    for (const set of Object.values(sets) as { loaded: boolean; err?: string }[]) assert.equal(set.loaded, true, set.err);
    assert.deepEqual(sets.remote.types, ['compat-remote-server', 'compat-remote-client']);
    assert.deepEqual(sets.classy.types, ['compat-classy', 'compat-classy-bad']);
  });

  it('refuses a module that needs Node-RED >=99, from nodesDir and through POST /nodes', async () => {
    const list = await request(server.at('nodes'), { token: admin, headers: { accept: 'application/json' } });
    assert.equal(list.status, 200);
    assert.equal(list.text.includes('node-red-contrib-compat-future'), false);
    assert.ok(server.logs.some((l) => l.includes('node-red-contrib-compat-future') && l.includes('>=99')));
    const res = await request(server.at('nodes'), { method: 'POST', token: admin, json: { module: path.join(COMPAT_FIXTURES, 'node-red-contrib-compat-future') } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.code, 'node_red_version_unsupported');
    assert.equal(res.body.message, 'node-red-contrib-compat-future needs Node-RED >=99; Runnel presents 5.0.7');
  });

  it('serves httpAdmin routes registered at load time, guarded by RED.auth.needsPermission', async () => {
    const anonymous = await request(server.at('compat/x/7?q=search'));
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.code, 'unauthorized');
    const ok = await request(server.at('compat/x/7?q=search'), { token: reader, headers: { 'x-compat': 'hdr' } });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { id: '7', q: 'search', header: 'hdr', user: 'reader' });
    const denied = await request(server.at('compat/echo'), { method: 'POST', token: reader, json: { a: 1 } });
    assert.equal(denied.status, 401);
    assert.equal(denied.body.code, 'insufficient_scope');
    const echo = await request(server.at('compat/echo'), { method: 'POST', token: admin, json: { a: 1 } });
    assert.equal(echo.status, 201);
    assert.equal(echo.headers.get('x-compat'), 'yes');
    assert.deepEqual(echo.body, { got: { a: 1 } });
  });

  it('lets an admin route inject into a node with node.receive() (sendStatus texts)', async () => {
    await deploy(server, [flowNode('pinged', 'compat-pinged', [['cap']]), capture('cap', 'pinged')], { tab: TAB, token: admin });
    const missing = await request(server.at('compat/ping/nope'), { method: 'POST', token: admin });
    assert.equal(missing.status, 404);
    assert.equal(missing.text, 'Not Found');
    const ok = await request(server.at('compat/ping/pinged'), { method: 'POST', token: admin });
    assert.equal(ok.status, 200);
    assert.equal(ok.text, 'OK');
    const [msg] = await cap.waitFor('pinged');
    assert.equal(msg.pinged, true);
  });

  it('RED._ reads the set catalog: interpolation, nested subs, plurals, explicit namespace, missing keys', async () => {
    await deploy(server, [flowNode('i18n', 'compat-i18n', [['cap']]), capture('cap', 'i18n')], { tab: TAB, token: admin });
    server.instance.runtime.services.nodes.get('i18n')!.receive({ payload: 'Ada' });
    const [msg] = await cap.waitFor('i18n');
    assert.deepEqual(msg.payload, {
      greeting: 'Hello Ada',
      nested: 'Hi ada',
      qualified: 'Hello x',
      many: '3 items',
      one: '1 item',
      missing: 'compat.nope',
      version: '5.0.7',
    });
  });

  it('node settings: prefixed names appear in RED.settings (settings file wins), a wrong prefix is refused with a warning', async () => {
    await deploy(server, [flowNode('classy', 'compat-classy', [['cap']], { prefix: '>' }), capture('cap', 'classy')], { tab: TAB, token: admin });
    server.instance.runtime.services.nodes.get('classy')!.receive({ payload: 'x' });
    const [msg] = await cap.waitFor('classy');
    assert.equal(msg.colour, 'teal');
    assert.equal(msg.secret, 'from-settings');
    assert.ok(server.logs.some((l) => l.includes("[compat-classy-bad] Registered invalid property name 'wrongName'")));
  });
});
