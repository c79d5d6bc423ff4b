import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';
import { adminHash, ADMIN_PASSWORD } from '../helpers/users.js';
import { send } from './support.js';

/**
 * httpNodeAuth is left to the moment RED.httpAdmin's routes let a request go when one of them might
 * take it (they do not take httpNodeAuth). A cross-site Origin keeps a request away from those
 * routes, and such a request went on to the flows' routes unchecked: any client adding an `Origin`
 * header to `POST /inject/x` reached a catch-all flow route without the password.
 */
let server: TestServer;
before(async () => {
  server = await startServer({ logging: { level: 'fatal' }, httpNodeAuth: { user: 'flows', pass: adminHash } });
  await deploy(server, [
    { id: 'button', type: 'inject', z: 't1', x: 1, y: 1, wires: [[]] },
    { id: 'in', type: 'http in', z: 't1', url: '/*', method: 'post', wires: [['fn']] },
    { id: 'fn', type: 'function', z: 't1', func: "msg.payload = 'flow'; return msg;", wires: [['out']] },
    { id: 'out', type: 'http response', z: 't1', wires: [] },
  ], { tab: 't1' });
});
after(() => server.dispose());

it('a request with a foreign Origin on a RED.httpAdmin path needs httpNodeAuth to reach a flow', async () => {
  const refused = await send(server.at('inject/anything'), { method: 'POST', headers: { origin: 'http://evil.example' } });
  assert.equal(refused.status, 401, refused.text);
  assert.equal(refused.body.code, 'unauthorized');
  const authorization = `Basic ${Buffer.from(`flows:${ADMIN_PASSWORD}`).toString('base64')}`;
  const served = await send(server.at('inject/anything'), { method: 'POST', headers: { origin: 'http://evil.example', authorization } });
  assert.equal(served.status, 200);
  assert.equal(served.text, 'flow');
});
