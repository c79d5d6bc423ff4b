import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020Module from 'ajv/dist/2020.js';
import { startServer, login, request, adminAuth, type TestServer } from '../helpers/server.js';

// ajv's CommonJS build, as ESM sees it.
const Ajv2020 = Ajv2020Module.default;

type RequestParts = { parameters?: { schema: unknown }[]; requestBody?: { content?: Record<string, { schema: unknown }> } };
type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components?: Record<string, unknown> };

/** Every route Fastify has, as `METHOD /path/{param}`, read from its route tree (HEAD and the http-in catch-alls aside). */
function registeredRoutes(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const branch = line.indexOf('── ');
    const m = /^(\S.*?) \(([A-Z, ]+)\)$/.exec(line.slice(branch + 3));
    if (branch < 0 || !m) continue;
    // Each level of the tree is indented by four characters.
    const depth = (branch + 3) / 4;
    stack.length = depth;
    stack[depth - 1] = m[1];
    const path = stack.join('').replace(/^\/?/, '/').replace(/:(\w+)/g, '{$1}');
    for (const method of m[2].split(', ')) {
      if (method === 'HEAD' || path === '/' || path.endsWith('*')) continue;
      out.push(`${method} ${path}`);
    }
  }
  return out.sort();
}

describe('GET /openapi.json', () => {
  let server: TestServer;
  let token: string;
  let doc: Doc;

  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'openapi-secret', metrics: { enabled: true } });
    token = await login(server);
    const r = await request<Doc>(server.at('openapi.json'));
    assert.equal(r.status, 200);
    doc = r.body;
  });
  after(() => server.dispose());

  test('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc) as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
    assert.equal(doc.openapi, '3.1.0');
  });

  test('lists every registered admin route, each with the error body and a success schema', () => {
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    // Fastify's route tree leaves out wildcard routes nested under a static prefix (/red/*), so it
    // is checked one way, and every documented route is checked against the router the other.
    const routes = registeredRoutes(server.instance.app.printRoutes({ commonPrefix: false }));
    assert.ok(routes.length > 30, `parsed ${routes.length} routes`);
    assert.deepEqual(routes.filter((r) => !documented.includes(r)), [], 'registered routes missing from the document');
    for (const route of documented) {
      const [method, p] = route.split(' ');
      const url = p.replace(/\{\*\}/g, '*').replace(/\{(\w+)\}/g, ':$1');
      assert.ok(server.instance.app.hasRoute({ method: method as 'GET', url }), `${route} is documented but not served`);
    }
    const withoutSuccessSchema: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        assert.ok(statuses.includes('4XX') || statuses.includes('4xx'), `${method} ${p} declares its error body`);
        if (!statuses.some((s) => /^2/.test(s))) withoutSuccessSchema.push(`${method.toUpperCase()} ${p}`);
      }
    }
    assert.deepEqual(withoutSuccessSchema, []);
  });

  test('every request schema is a valid JSON Schema (the server skips that check at run time)', () => {
    const ajv = new Ajv2020({ strict: false });
    const checked: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops) as [string, RequestParts][]) {
        const schemas = [...(op.parameters ?? []).map((x) => x.schema), ...Object.values(op.requestBody?.content ?? {}).map((c) => c.schema)];
        for (const schema of schemas) {
          assert.ok(ajv.validateSchema(schema as object), `${method.toUpperCase()} ${p}: ${JSON.stringify(ajv.errors)} in ${JSON.stringify(schema)}`);
          checked.push(`${method} ${p}`);
        }
      }
    }
    assert.ok(checked.length > 50, `only ${checked.length} request schemas found`);
  });

  test('real responses validate against the declared schemas', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'doc', components: doc.components ?? {} });
    const schemaFor = (method: string, template: string, status: number, contentType: string) => {
      const responses = doc.paths[template]?.[method.toLowerCase()]?.responses;
      assert.ok(responses, `${method} ${template} is documented`);
      const declared = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses[`${String(status)[0]}xx`];
      assert.ok(declared, `${method} ${template} declares ${status}`);
      const content = declared.content ?? { 'application/json': { schema: {} } };
      // The media type the answer came with, else the declared wildcard; a bodiless answer, the first declared.
      const types = Object.keys(content);
      const type = contentType ? (types.find((t) => t === contentType) ?? types.find((t) => t === '*/*')) : types[0];
      assert.ok(type, `${method} ${template} ${status} declares ${contentType || 'no content type'} (declared: ${Object.keys(content).join(', ')})`);
      return { text: !type.includes('json'), schema: JSON.parse(JSON.stringify(content[type].schema).replaceAll('"#/components/', '"doc#/components/')) };
    };
    const v2 = { 'Runtime-API-Version': 'v2' };
    const flows = [{ id: 't1', type: 'tab', label: 't1' }, { id: 'c1', type: 'comment', z: 't1', x: 1, y: 1, wires: [] }];
    const rev = createHash('sha256').update(JSON.stringify(flows)).digest('hex');
    const calls: [string, string, string, RequestInit & { json?: unknown; token?: string }][] = [
      ['POST', '/flows', 'flows', { headers: v2, json: { flows } }],
      ['GET', '/flows', 'flows', { headers: v2 }],
      ['GET', '/flows', 'flows', {}],
      ['GET', '/flows/state', 'flows/state', {}],
      ['POST', '/flows/preview', 'flows/preview', { headers: v2, json: { flows: [] } }],
      ['GET', '/flows/history', 'flows/history', {}],
      ['GET', '/flows/history/{rev}', `flows/history/${rev}`, {}],
      ['GET', '/flows/history/{rev}/diff', `flows/history/${rev}/diff?to=${rev}`, {}],
      ['GET', '/flows/history/{rev}', `flows/history/${'f'.repeat(64)}`, {}],
      ['POST', '/flows/rollback', 'flows/rollback', { json: { rev } }],
      ['POST', '/flows/rollback', 'flows/rollback', { json: { rev: 'bad' } }],
      ['GET', '/flow/{id}', 'flow/t1', {}],
      ['GET', '/flow/{id}', 'flow/global', {}],
      ['POST', '/flow', 'flow', { json: { label: 'x', nodes: [] } }],
      ['GET', '/settings', 'settings', {}],
      ['GET', '/nodes', 'nodes', {}],
      ['GET', '/nodes/{module}', 'nodes/runnel', {}],
      ['GET', '/credentials/{type}/{id}', 'credentials/comment/c1', {}],
      ['GET', '/health', 'health', { token: '' }],
      ['GET', '/health/ready', 'health/ready', { token: '' }],
      ['GET', '/auth/login', 'auth/login', { token: '' }],
      ['POST', '/auth/token', 'auth/token', { token: '', json: { client_id: 'runtime-admin', grant_type: 'password', username: 'admin', password: 'nope' } }],
      ['GET', '/settings', 'settings', { token: 'not-a-token' }],
      ['POST', '/auth/tokens', 'auth/tokens', { json: { name: 'ci', scope: ['flows.read'] } }],
      ['GET', '/auth/tokens', 'auth/tokens', {}],
      ['DELETE', '/auth/tokens/{id}', 'auth/tokens/nope', {}],
      ['GET', '/metrics', 'metrics', {}],
      // The editor's page, files and JSON helpers.
      ['GET', '/', '', { token: '' }],
      ['GET', '/favicon.ico', 'favicon.ico', { token: '' }],
      ['GET', '/theme', 'theme', { token: '' }],
      ['GET', '/theme/{kind}/{name}', 'theme/css/none.css', { token: '' }],
      ['GET', '/nodes/messages', 'nodes/messages', {}],
      ['GET', '/nodes/{module}/{set}', 'nodes/node-red/inject', {}],
      ['GET', '/nodes/{module}/{set}', 'nodes/node-red/inject', { headers: { accept: 'text/html' } }],
      ['GET', '/nodes/{module}/{set}', 'nodes/node-red/nope', {}],
      ['GET', '/nodes/{module}/{set}/messages', 'nodes/node-red/inject/messages', {}],
      ['GET', '/icons', 'icons', {}],
      ['GET', '/icons/{module}/{icon}', 'icons/node-red/inject.svg', { token: '' }],
      ['GET', '/plugins', 'plugins', {}],
      ['GET', '/plugins', 'plugins', { headers: { accept: 'text/html' } }],
      ['GET', '/plugins/messages', 'plugins/messages', {}],
      ['POST', '/settings/user', 'settings/user', { json: { editor: { view: { 'view-grid-size': 20 } } } }],
      ['GET', '/settings/user', 'settings/user', {}],
      ['GET', '/context/global', 'context/global', {}],
      ['GET', '/context/global/{key}', 'context/global/nothing', {}],
      ['DELETE', '/context/global/{key}', 'context/global/nothing', {}],
      ['GET', '/context/flow/{id}', 'context/flow/t1', {}],
      ['GET', '/context/node/{id}/{key}', 'context/node/c1/nothing', {}],
      ['GET', '/context/node/{id}', 'context/node/absent', {}],
      ['GET', '/library/{library}/{type}', 'library/local/flows', {}],
      ['GET', '/library/{library}/{type}', 'library/examples/flows', {}],
      ['GET', '/library/{library}/{type}', 'library/elsewhere/flows', {}],
    ];
    for (const [method, template, p, init] of calls) {
      const r = await request(server.at(p), { method, token: init.token ?? token, redirect: 'manual', ...init });
      const declared = schemaFor(method, template, r.status, (r.headers.get('content-type') ?? '').split(';')[0]);
      const validate = ajv.compile(declared.schema);
      assert.ok(validate(declared.text ? r.text : (r.body ?? null)), `${method} ${p} → ${r.status}: ${JSON.stringify(validate.errors)} for ${r.text.slice(0, 300)}`);
    }
  });
});
