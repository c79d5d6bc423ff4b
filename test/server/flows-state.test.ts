import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, login, request, adminAuth, READER_PASSWORD } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

const v2 = { 'Runtime-API-Version': 'v2' };
const flowsAnswering = (text: string) => [
  { id: 't1', type: 'tab', label: 't1' },
  { id: 'in', type: 'http in', z: 't1', url: '/hello', method: 'get', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 't1', func: `msg.payload = ${JSON.stringify(text)}; return msg;`, outputs: 1, x: 2, y: 1, wires: [['out']] },
  { id: 'out', type: 'http response', z: 't1', x: 3, y: 1, wires: [] },
];

describe('POST /flows/state', () => {
  test('does not exist unless runtimeState.enabled', async () => {
    const server = await startServer({ adminAuth: adminAuth() });
    try {
      const r = await request(server.at('flows/state'), { method: 'POST', token: await login(server), json: { state: 'stop' } });
      assert.deepEqual([r.status, r.body.code], [404, 'not_found']);
    } finally {
      await server.dispose();
    }
  });

  test('stops and starts the flows; deploys while stopped are saved, not started; a stop survives a restart', async () => {
    const settings = { adminAuth: adminAuth(), runtimeState: { enabled: true } };
    let server = await startServer(settings);
    try {
      let token = await login(server);
      assert.equal((await request(server.at('flows'), { method: 'POST', token, headers: v2, json: { flows: flowsAnswering('one') } })).status, 200);
      assert.equal((await request(server.at('hello'))).text, 'one');

      const stop = await request(server.at('flows/state'), { method: 'POST', token, json: { state: 'stop' } });
      assert.deepEqual([stop.status, stop.body], [200, { state: 'stop' }]);
      assert.equal((await request(server.at('flows/state'), { token })).body.state, 'stop');
      assert.equal((await request(server.at('hello'))).status, 404);
      assert.equal((await request(server.at('health/ready'))).status, 503);
      const deployed = await request(server.at('flows'), { method: 'POST', token, headers: v2, json: { flows: flowsAnswering('two') } });
      assert.equal(deployed.status, 200);
      assert.equal((await request(server.at('hello'))).status, 404, 'a deploy while stopped starts nothing');
      assert.equal((await request(server.at('flows'), { token, headers: v2 })).body.rev, deployed.body.rev);

      const userDir = server.userDir;
      await server.stop();
      server = await startServer(settings, userDir);
      token = await login(server);
      assert.equal((await request(server.at('flows/state'), { token })).body.state, 'stop', 'the stop survives a restart');
      assert.equal((await request(server.at('hello'))).status, 404);

      const start = await request(server.at('flows/state'), { method: 'POST', token, json: { state: 'start' } });
      assert.deepEqual([start.status, start.body], [200, { state: 'start' }]);
      assert.equal((await request(server.at('hello'))).text, 'two');
      assert.equal((await request(server.at('health/ready'))).status, 200);
      assert.ok(server.logs.some((l) => l.includes('"event":"flows.state"') && l.includes('"state":"start"')));

      const bogus = await request(server.at('flows/state'), { method: 'POST', token, json: { state: 'bogus' } });
      assert.deepEqual([bogus.status, bogus.body], [400, { code: 'invalid_run_state', message: "Cannot change flows runtime state to 'bogus'" }]);
      const missing = await request(server.at('flows/state'), { method: 'POST', token, json: {} });
      assert.deepEqual([missing.status, missing.body.code], [400, 'invalid_run_state']);
      const reader = await login(server, 'reader', READER_PASSWORD, 'read');
      const denied = await request(server.at('flows/state'), { method: 'POST', token: reader, json: { state: 'stop' } });
      assert.deepEqual([denied.status, denied.body.code], [401, 'insufficient_scope']);
      assert.equal((await request(server.at('hello'))).text, 'two');
    } finally {
      await server.dispose();
    }
  });
});

describe('GET /diagnostics', () => {
  test("answers Node-RED's report shape with secrets and paths redacted; diagnostics.enabled: false makes it 403", async () => {
    const server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'very-secret-key', diagnostics: { enabled: true } });
    try {
      const reader = await login(server, 'reader', READER_PASSWORD, 'read');
      const r = await request(server.at('diagnostics'), { token: reader });
      assert.equal(r.status, 200);
      assert.equal(r.body.report, 'diagnostics');
      assert.equal(r.body.scope, 'basic');
      assert.deepEqual(Object.keys(r.body), ['report', 'scope', 'time', 'intl', 'nodejs', 'os', 'runtime']);
      assert.equal(r.body.nodejs.version, process.version);
      assert.deepEqual(r.body.runtime.flows, { state: 'start', started: true });
      assert.equal(r.body.runtime.modules['node-red'], '5.0.7');
      const s = r.body.runtime.settings;
      assert.deepEqual([s.adminAuth, s.credentialSecret, s.userDir, s.uiHost, s.uiPort], ['SET', 'SET', 'SET', 'SET', 'SET']);
      assert.ok(!r.text.includes('very-secret-key') && !r.text.includes(server.userDir) && !r.text.includes('$2'), 'no secret, hash or path');
      assert.equal((await request(server.at('diagnostics'))).status, 401);
    } finally {
      await server.dispose();
    }
    const off = await startServer({ diagnostics: { enabled: false } });
    try {
      const r = await request(off.at('diagnostics'));
      assert.deepEqual([r.status, r.body.code], [403, 'diagnostics_disabled']);
    } finally {
      await off.dispose();
    }
  });
});

describe('GET /flows/state with stored credentials that do not decrypt', () => {
  test('lists them with the fix (the key, or deleting the file) until a deploy replaces them', async () => {
    const flows = [{ id: 'r1', type: 'http request', z: 't1', method: 'GET', url: 'http://127.0.0.1:9/', x: 1, y: 1, wires: [[]] }];
    let server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'first key' });
    const dir = server.userDir;
    try {
      let token = await login(server);
      await deploy(server, flows, { tab: 't1', token, api: 'v2', credentials: { r1: { user: 'u', password: 'p' } } });
      assert.equal((await request(server.at('flows/state'), { token })).body.errors, undefined);
      await server.stop();
      server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'another key' }, dir);
      token = await login(server);
      const state = (await request(server.at('flows/state'), { token })).body;
      assert.equal(state.state, 'start');
      const credFile = path.join(dir, 'flows_cred.json');
      assert.deepEqual(state.errors, [{
        id: 'credentials',
        type: 'credentials',
        error: 'The stored credentials do not decrypt with the credentialSecret of the settings: the flows run without them, and the next deploy replaces them. ' +
          `Set credentialSecret to the key that encrypted them and restart, or delete ${credFile} to start without credentials`,
      }]);
      assert.ok(server.logs.some((l) => l.includes('"level":50') && l.includes(`delete ${credFile}`)), 'the log says the same');
      await deploy(server, flows, { tab: 't1', token, api: 'v2' });
      assert.equal((await request(server.at('flows/state'), { token })).body.errors, undefined, 'the deploy rewrote them under the new key');
    } finally {
      await server.dispose();
    }
  });
});
