import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminAuth, login, READER_PASSWORD, request, startServer, type TestServer } from '../helpers/server.js';

/** GET /cluster of a single instance on file storage: itself, always the primary. */
describe('GET /cluster without shared storage', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), instanceId: 'solo', instanceUrl: 'http://127.0.0.1:1880/' });
  });
  after(async () => server.dispose());

  it('lists this instance as the primary, with its rev and state, to a flows.read token', async () => {
    assert.equal((await request(server.at('cluster'))).status, 401);
    const token = await login(server, 'reader', READER_PASSWORD, 'read');
    const r = await request(server.at('cluster'), { token });
    assert.equal(r.status, 200, r.text);
    const [me, ...rest] = r.body.instances;
    assert.deepEqual(rest, []);
    assert.deepEqual({ ...me, lastSeen: typeof me.lastSeen }, {
      id: 'solo', url: 'http://127.0.0.1:1880/', version: server.instance.runtime.version,
      rev: server.instance.runtime.rev, state: 'start', primary: true, modules: {}, lastSeen: 'string',
    });
  });
});
