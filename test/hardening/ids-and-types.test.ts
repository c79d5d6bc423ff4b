import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

/**
 * Credentials read through another type's field declarations came
 * back in clear; node ids named after Object.prototype members gave 500s or lost credentials;
 * a multipart POST /nodes without a boundary gave 500.
 */
let server: TestServer;
before(async () => {
  server = await startServer({ logging: { level: 'fatal' } });
});
after(() => server.dispose());


test('GET /credentials with another type answers 404, never the password in clear', async () => {
  // http request declares `password` as a password field; the http proxy config... any type declaring it as text would leak.
  const flows = [
    { id: 't', type: 'tab' },
    { id: 'req', type: 'http request', z: 't', method: 'GET', url: 'http://127.0.0.1:9/', wires: [] },
  ];
  await deploy(server, flows, { api: 'v2', credentials: { req: { user: 'alice', password: 'hunter2-secret' } } });
  const own = await request(server.at('credentials/http-request/req'));
  assert.equal(own.status, 200);
  assert.equal(own.body.has_password, true);
  assert.ok(!own.text.includes('hunter2-secret'));
  for (const other of ['mqtt-broker', 'inject', 'function', 'no-such-type', 'global-config', 'subflow']) {
    const read = await request(server.at(`credentials/${other}/req`));
    assert.ok(!read.text.includes('hunter2-secret'), `${other} leaked the password`);
    assert.equal(read.status, 404, `${other}: ${read.text}`);
  }
});

test('ids named like Object.prototype members keep their credentials and never 500', async () => {
  const names = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf'];
  const flows = [{ id: 't', type: 'tab' }, ...names.map((id) => ({ id, type: 'http request', z: 't', method: 'GET', url: 'http://127.0.0.1:9/', wires: [] }))];
  const credentials = Object.create(null);
  for (const id of names) credentials[id] = { user: `u-${id}`, password: `p-${id}` };
  // A top-level key __proto__ is refused by the JSON parser (400) rather than dropped.
  const poisoned = await request(server.at('flows'), { method: 'POST', body: JSON.stringify({ flows, credentials }), headers: { 'content-type': 'application/json', 'runtime-api-version': 'v2' } });
  assert.equal(poisoned.status, 400);
  assert.equal(poisoned.body.code, 'invalid_json');
  delete credentials.__proto__;
  const body = JSON.stringify({ flows, credentials });
  const res = await request(server.at('flows'), { method: 'POST', body, headers: { 'content-type': 'application/json', 'runtime-api-version': 'v2' } });
  assert.equal(res.status, 200, res.text);
  for (const id of names.filter((n) => n !== '__proto__')) {
    const read = await request(server.at(`credentials/http-request/${id}`));
    assert.equal(read.status, 200, `${id}: ${read.text}`);
    assert.deepEqual(read.body, { user: `u-${id}`, has_password: true }, id);
  }
  const state = await request(server.at('flows/state'));
  assert.equal(state.status, 200);
  const inline = [{ id: 't', type: 'tab' }, ...names.map((id) => ({ id, type: 'http request', z: 't', url: 'http://127.0.0.1:9/', wires: [], credentials: { user: `i-${id}` } }))];
  const again = await request(server.at('flows'), { method: 'POST', body: JSON.stringify(inline), headers: { 'content-type': 'application/json' } });
  assert.equal(again.status, 204, again.text);
  for (const id of names) assert.equal((await request(server.at(`credentials/http-request/${id}`))).body.user, `i-${id}`, id);
});

test('a multipart POST /nodes without a boundary is a 400', async () => {
  for (const type of ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="unterminated']) {
    const res = await request(server.at('nodes'), { method: 'POST', body: 'garbage', headers: { 'content-type': type } });
    assert.equal(res.status, 400, `${type}: ${res.status} ${res.text}`);
    assert.equal(typeof res.body.code, 'string');
  }
});
