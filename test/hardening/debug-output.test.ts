import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';
import { Editor } from '../helpers/comms.js';

/**
 * Issue 25's finding 17: every debug node's sidebar output was also written to the log at info
 * level, so payloads meant for the editor landed in journald and container logs. Node-RED logs a
 * debug node's output only with "to console". Driven as a user meets it: a request into a flow, the
 * editor's /comms, and the process's log.
 */
let server: TestServer;
before(async () => {
  server = await startServer({ logging: { level: 'trace' } });
  await deploy(server, [
    { id: 't', type: 'tab', label: 'debug output' },
    { id: 'in', type: 'http in', z: 't', url: '/report', method: 'post', wires: [['sidebar', 'console', 'out']] },
    { id: 'sidebar', type: 'debug', z: 't', name: 'sidebar', active: true, tosidebar: true, console: false, complete: 'payload', x: 1, y: 1, wires: [] },
    { id: 'console', type: 'debug', z: 't', name: 'console', active: true, tosidebar: false, console: true, complete: 'payload.logged', x: 1, y: 1, wires: [] },
    { id: 'out', type: 'http response', z: 't', x: 1, y: 1, wires: [] },
  ]);
});
after(() => server.dispose());

test('a debug node without "to console" shows a payload in the editor only, never in the log', async () => {
  const editor = new Editor(server.url);
  try {
    await editor.send({ subscribe: 'debug' });
    const post = (json: unknown) => request(new URL('report', server.url).href, { method: 'POST', json });
    assert.equal((await post({ secret: 'sidebar-only-4711' })).status, 200);
    const shown = await editor.waitFor('debug');
    assert.ok(JSON.stringify(shown).includes('sidebar-only-4711'), 'the editor got the payload');
    // A later message's console line: once it is in the log, whatever the sidebar node wrote for
    // the first message (which the editor already got) would be there before it.
    assert.equal((await post({ logged: 'for-the-log-0815' })).status, 200);
    await eventually(() => server.logs.some((l) => l.includes('for-the-log-0815')));
    assert.deepEqual(server.logs.filter((l) => l.includes('sidebar-only-4711')), []);
  } finally {
    editor.close();
  }
});

