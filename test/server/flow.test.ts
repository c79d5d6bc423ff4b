import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, login, request, adminAuth, READER_PASSWORD, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

const v2 = { 'Runtime-API-Version': 'v2' };

const FLOWS = [
  { id: 't1', type: 'tab', label: 'One', info: 'first', env: [{ name: 'A', value: '1', type: 'str' }] },
  { id: 't2', type: 'tab', label: 'Two', disabled: false },
  { id: 'c1', type: 'comment', z: 't1', x: 1, y: 1, wires: [] },
  { id: 'lo', type: 'link out', z: 't1', links: [], x: 2, y: 2, wires: [] },
  { id: 'cfg', type: 'junction', z: 't1' },
  { id: 'hr', type: 'http request', z: 't2', x: 3, y: 3, wires: [], credentials: { user: 'u', password: 'p' } },
  { id: 'gcfg', type: 'junction' },
  { id: 'sf', type: 'subflow', name: 'Sub', in: [], out: [] },
  { id: 'sfn', type: 'comment', z: 'sf', x: 1, y: 1, wires: [] },
];

describe("Node-RED's single-flow API", () => {
  let server: TestServer;
  let token: string;
  let reader: string;
  const flows = async () => (await request(server.at('flows'), { token, headers: v2 })).body;

  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'flow-secret' });
    token = await login(server);
    reader = await login(server, 'reader', READER_PASSWORD, 'read');
    await deploy(server, FLOWS, { api: 'v2', token });
  });
  after(() => server.dispose());

  test('GET /flow/:id answers the tab in Node-RED shape: nodes, configs, link out without wires, no credentials', async () => {
    const r = await request(server.at('flow/t1'), { token: reader });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      id: 't1', label: 'One', info: 'first', env: [{ name: 'A', value: '1', type: 'str' }],
      nodes: [{ id: 'c1', type: 'comment', z: 't1', x: 1, y: 1, wires: [] }, { id: 'lo', type: 'link out', z: 't1', links: [], x: 2, y: 2 }],
      configs: [{ id: 'cfg', type: 'junction', z: 't1' }],
    });
    const two = await request(server.at('flow/t2'), { token: reader });
    assert.deepEqual(two.body, { id: 't2', label: 'Two', disabled: false, nodes: [{ id: 'hr', type: 'http request', z: 't2', x: 3, y: 3, wires: [] }] });
  });

  test('GET /flow/global answers the global config nodes and subflows with their nodes', async () => {
    const r = await request(server.at('flow/global'), { token: reader });
    assert.deepEqual(r.body, {
      id: 'global',
      configs: [{ id: 'gcfg', type: 'junction' }],
      subflows: [{ id: 'sf', type: 'subflow', name: 'Sub', in: [], out: [], nodes: [{ id: 'sfn', type: 'comment', z: 'sf', x: 1, y: 1, wires: [] }] }],
    });
  });

  test('unknown ids are 404 not_found; DELETE global is 400; no token 401, a reader cannot write', async () => {
    for (const [method, p] of [['GET', 'flow/nope'], ['PUT', 'flow/nope'], ['DELETE', 'flow/nope'], ['GET', 'flow/c1']] as const) {
      const r = await request(server.at(p), { method, token, ...(method === 'PUT' ? { json: { label: 'x', nodes: [] } } : {}) });
      assert.deepEqual([r.status, r.body.code], [404, 'not_found'], `${method} ${p}`);
    }
    const global = await request(server.at('flow/global'), { method: 'DELETE', token });
    assert.deepEqual([global.status, global.body], [400, { code: 'invalid_request', message: 'not allowed to remove global' }]);
    assert.equal((await request(server.at('flow/t1'))).status, 401);
    const denied = await request(server.at('flow'), { method: 'POST', token: reader, json: { label: 'x', nodes: [] } });
    assert.deepEqual([denied.status, denied.body.code], [401, 'insufficient_scope']);
  });

  test('POST /flow adds a tab with a generated id, moves its nodes onto it, and deploys it as a flows revision', async () => {
    const before = await flows();
    const r = await request(server.at('flow'), { method: 'POST', token, json: { id: 'ignored', label: 'Three', info: 'new', nodes: [{ id: 'n3', type: 'comment', z: 'elsewhere', x: 5, y: 5, wires: [] }], configs: [{ id: 'cfg3', type: 'junction' }] } });
    assert.equal(r.status, 200, r.text);
    assert.match(r.body.id, /^[0-9a-f]{16}$/);
    const after = await flows();
    assert.notEqual(after.rev, before.rev);
    assert.deepEqual(after.flows.slice(before.flows.length), [
      { type: 'tab', label: 'Three', id: r.body.id, info: 'new' },
      { id: 'n3', type: 'comment', z: r.body.id, x: 5, y: 5, wires: [] },
      { id: 'cfg3', type: 'junction', z: r.body.id },
    ]);
    const [revision] = (await request(server.at('flows/history'), { token })).body.revisions;
    assert.deepEqual([revision.rev, revision.type, revision.user], [after.rev, 'flows', 'admin']);
  });

  test('POST /flow refuses a body without nodes, a duplicate id and tab/subflow nodes with 400, changing nothing', async () => {
    const before = await flows();
    const cases = [
      [{ label: 'x' }, 'missing nodes property'],
      [{ label: 'x', nodes: [{ id: 'c1', type: 'comment', x: 1, y: 1 }] }, 'duplicate id: c1'],
      [{ label: 'x', nodes: [{ id: 'zz', type: 'tab' }] }, 'invalid node type: tab'],
      [{ label: 'x', nodes: [{ id: 'zz', type: 'subflow' }] }, 'invalid node type: subflow'],
      [{ label: 'x', nodes: 'no' }, 'nodes must be an array of nodes'],
      [{ label: 'x', nodes: [{ id: 'a1', type: 'comment', x: 1, y: 1 }, { id: 'a1', type: 'comment', x: 1, y: 1 }] }, 'node id a1 is used more than once'],
    ] as const;
    for (const [json, message] of cases) {
      const r = await request(server.at('flow'), { method: 'POST', token, json });
      assert.deepEqual([r.status, r.body], [400, { code: 'invalid_flows', message }]);
    }
    const notObject = await request(server.at('flow'), { method: 'POST', token, json: [1] });
    assert.deepEqual([notObject.status, notObject.body.code], [400, 'invalid_request']);
    assert.deepEqual(await flows(), before);
  });

  test('PUT /flow/:id replaces the tab and its nodes in place, restarting only that tab; credentials are kept for nodes that keep them', async () => {
    const t2Node = server.instance.runtime.services.nodes.get('hr');
    const r = await request(server.at('flow/t1'), { method: 'PUT', token, json: { id: 't1', label: 'One!', nodes: [{ id: 'c9', type: 'comment', x: 9, y: 9, wires: [] }] } });
    assert.deepEqual([r.status, r.body], [200, { id: 't1' }]);
    const now = (await flows()).flows as { id: string; z?: string }[];
    assert.deepEqual(now.slice(0, 2), [{ type: 'tab', label: 'One!', id: 't1' }, { id: 'c9', type: 'comment', x: 9, y: 9, wires: [], z: 't1' }]);
    assert.ok(!now.some((n) => n.id === 'c1' || n.id === 'cfg'));
    assert.equal(server.instance.runtime.services.nodes.get('hr'), t2Node, 'a node on another tab kept running');
    assert.deepEqual((await request(server.at('credentials/http-request/hr'), { token })).body, { user: 'u', has_password: true });
  });

  test('PUT /flow/global replaces the global config nodes and subflows', async () => {
    const r = await request(server.at('flow/global'), { method: 'PUT', token, json: { configs: [{ id: 'g2', type: 'junction' }], subflows: [] } });
    assert.deepEqual([r.status, r.body], [200, { id: 'global' }]);
    assert.deepEqual((await request(server.at('flow/global'), { token })).body, { id: 'global', configs: [{ id: 'g2', type: 'junction' }] });
    assert.ok((await flows()).flows.some((n: { id: string }) => n.id === 'hr'));
  });

  test('DELETE /flow/:id removes the tab and its nodes (204) and drops their credentials', async () => {
    const r = await request(server.at('flow/t2'), { method: 'DELETE', token });
    assert.equal(r.status, 204);
    const now = (await flows()).flows as { id: string }[];
    assert.ok(!now.some((n) => n.id === 't2' || n.id === 'hr'));
    assert.equal((await request(server.at('flow/t2'), { token })).status, 404);
    assert.deepEqual((await request(server.at('credentials/http-request/hr'), { token })).body, {});
  });
});
