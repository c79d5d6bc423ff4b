import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';
import { describe as describeError } from '../../src/server/errors.js';
import { isErrorCode } from '../../src/base/errors.js';

/** A refusal a newcomer meets names the fix, through the real HTTP API. */
describe('error messages that say the fix', () => {
  let server: TestServer;
  let token: string;
  const post = (p: string, body: string, headers: Record<string, string> = {}) =>
    request(server.at(p), { method: 'POST', token, headers: { 'content-type': 'application/json', ...headers }, body });

  before(async () => {
    server = await startServer({ adminAuth: adminAuth() });
    token = await login(server);
  });
  after(() => server.dispose());

  it('a v2 body without the v2 header names Runtime-API-Version: v2; a v1 array with it says where the array goes', async () => {
    const flows = [{ id: 't1', type: 'tab', label: 'T' }];
    const v2Body = await post('flows', JSON.stringify({ flows }));
    assert.deepEqual([v2Body.status, v2Body.body], [400, {
      code: 'invalid_flows',
      message: 'This is a v2 deploy body ({flows, rev?, credentials?}): send it with the header Runtime-API-Version: v2 (without it a deploy is v1, a JSON array of nodes)',
    }]);
    const other = await post('flows', '{"nodes": []}');
    assert.deepEqual([other.status, other.body.message], [400, 'A v1 deploy body must be a JSON array of nodes (a {flows, rev?, credentials?} body needs the header Runtime-API-Version: v2)']);
    const array = await post('flows', JSON.stringify(flows), { 'Runtime-API-Version': 'v2' });
    assert.deepEqual([array.status, array.body.code, array.body.message], [400, 'invalid_flows',
      'A v2 deploy body is an object {flows, rev?, credentials?}: put the array in "flows", or send it without the header Runtime-API-Version: v2 (a v1 deploy)']);
    // Node-RED's header name works the same way, and following the advice deploys.
    assert.equal((await post('flows', JSON.stringify({ flows }), { 'Node-RED-API-Version': 'v2' })).status, 200);
  });

  it('"module": "name@1.2.3" says to use "version"', async () => {
    for (const [module, name, version] of [['node-red-node-random@1.2.3', 'node-red-node-random', '1.2.3'], ['@scope/pkg@^2.0.0', '@scope/pkg', '^2.0.0']]) {
      const res = await post('nodes', JSON.stringify({ module }));
      assert.deepEqual([res.status, res.body], [400, {
        code: 'invalid_module_name',
        message: `Invalid module name: ${module}: the version has its own field, {"module": "${name}", "version": "${version}"}`,
      }]);
    }
    const both = await post('nodes', JSON.stringify({ module: 'x@1.0.0', version: '1.0.0' }));
    assert.deepEqual([both.status, both.body], [400, { code: 'invalid_module_name', message: 'Invalid module name: x@1.0.0' }]);
  });

  it('malformed JSON gives line, column and character of the mistake: admin API, token endpoint (OAuth shape) and http-in routes', async () => {
    const res = await post('flows', '[\n  {"id": "a", "type": }\n]');
    assert.deepEqual([res.status, res.body.code], [400, 'invalid_json']);
    assert.match(res.body.message, /^Request body is not valid JSON at line 2, column 23 \(character 24\): Unexpected token '\}'/);
    const oauth = await request(server.at('auth/token'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"client_id": "runtime-admin", "grant_type": password}' });
    assert.equal(oauth.status, 400);
    assert.equal(oauth.body.error, 'invalid_request');
    assert.match(oauth.body.error_description, /^Request body is not valid JSON at line 1, column 46 \(character 45\): /);
    await deploy(server, [
      { id: 'in', type: 'http in', z: 't1', url: '/echo', method: 'post', wires: [['out']] },
      { id: 'out', type: 'http response', z: 't1', wires: [] },
    ], { tab: 't1', token });
    const route = await request(server.at('echo'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a": 1,}' });
    assert.deepEqual([route.status, route.body.code], [400, 'invalid_json']);
    assert.match(route.body.message, /^Request body is not valid JSON at line 1, column 9 \(character 8\): /);
    // A body with a forbidden __proto__ key parses as JSON: it keeps Fastify's answer.
    const poisoned = await post('flows', '[{"__proto__": {"x": 1}}]');
    assert.deepEqual([poisoned.status, poisoned.body], [400, { code: 'invalid_json', message: 'Request body is not valid JSON' }]);
  });

  it('a missing or unknown client_id on /auth/token lists the client ids to send (OAuth error shape)', async () => {
    const form = (fields: Record<string, string>) =>
      request(server.at('auth/token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    const missing = await form({ grant_type: 'password', username: 'admin', password: 'x' });
    assert.equal(missing.status, 401);
    assert.deepEqual(missing.body, { error: 'invalid_client', error_description: 'Missing client_id: send one of runtime-admin, runtime-editor, node-red-admin, node-red-editor, e.g. client_id=runtime-admin' });
  });
});

describe('admin API error codes stay in the catalogue', () => {
  it('a client error of Fastify\'s without an entry of its own answers a catalogued code, with its status', () => {
    const fastifyError = (statusCode: number) => Object.assign(new Error('something Fastify refused'), { statusCode, code: 'FST_ERR_SOMETHING_NEW' });
    assert.deepEqual(describeError(fastifyError(422)), { status: 400, code: 'invalid_request', message: 'something Fastify refused' });
    assert.deepEqual(describeError(fastifyError(404)), { status: 404, code: 'not_found', message: 'something Fastify refused' });
    for (const status of [400, 401, 403, 404, 405, 408, 409, 413, 415, 418, 429, 431]) assert.ok(isErrorCode(describeError(fastifyError(status)).code), String(status));
  });
});
