import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { COMPAT_FIXTURES, TAB, capture, flowNode } from './support.js';
import { deploy } from '../helpers/deploy.js';

const greeter = (id: string, wires: string[][], props: Record<string, unknown> = {}) => flowNode(id, 'compat-greeter', wires, props);

describe('compat: a subflow module (RED.nodes.registerSubflow)', { timeout: 30_000 }, () => {
  let server: TestServer;
  let cap: Capture;
  const flows = (times: number) => [
    greeter('loud', [['cap-loud']], { name: 'loud one', GREETING: 'hi', TIMES: times, LOUD: true, credentials: { SECRET: 'pw-1' } }),
    greeter('plain', [['cap-plain']]),
    greeter('typed', [['cap-typed']], { GREETING: { type: 'env', value: 'RUNNEL_TEST_GREETING' } }),
    capture('cap-loud', 'loud'),
    capture('cap-plain', 'plain'),
    capture('cap-typed', 'typed'),
    flowNode('catch', 'catch', [['cap-err']], { scope: ['loud'], uncaught: false }),
    capture('cap-err', 'errors'),
  ];
  const send = (id: string, payload: unknown) => server.instance.runtime.services.nodes.get(id)!.receive({ payload });

  before(async () => {
    process.env.RUNNEL_TEST_GREETING = 'howdy';
    server = await startServer({ nodesDir: [path.join(COMPAT_FIXTURES, 'subflow-module')] });
    cap = installCapture(server);
    await deploy(server, flows(2), { tab: TAB });
  });
  after(async () => {
    delete process.env.RUNNEL_TEST_GREETING;
    await server.dispose();
  });

  it('lists the module type under its node set', async () => {
    const res = await request(server.at('nodes'), { headers: { accept: 'application/json' } });
    const set = (res.body as { id: string; types: string[]; module: string }[]).find((s) => s.module === 'node-red-contrib-compat-subflow');
    assert.deepEqual(set && { id: set.id, types: set.types }, { id: 'node-red-contrib-compat-subflow/greeter', types: ['compat-greeter'] });
  });

  it('runs instances with env from their properties, credentials and the nested subflow', async () => {
    send('loud', 'bob');
    send('plain', 'ann');
    send('typed', 'cy');
    const [[loud], [plain], [typed]] = await Promise.all([cap.waitFor('loud'), cap.waitFor('plain'), cap.waitFor('typed')]);
    assert.deepEqual([loud.payload, loud.secret, loud.subflow], ['HI BOB HI BOB!', 'pw-1', 'loud one']);
    assert.deepEqual([plain.payload, plain.secret], ['hello ann!', undefined], 'unset properties keep the module defaults');
    assert.equal(typed.payload, 'howdy cy!', 'a {type, value} property is evaluated with its type');
  });

  it('routes an error inside the module to a catch node scoped to the instance', async () => {
    send('loud', 'fail');
    const [err] = await cap.waitFor('errors');
    assert.equal(err.error.message, 'Error: greeter failed');
    assert.equal(err.error.source.type, 'function');
  });

  it('keeps the credential out of GET /flows and restarts an instance whose properties change', async () => {
    const res = await request(server.at('flows'));
    assert.ok(!JSON.stringify(res.body).includes('pw-1'));
    await deploy(server, flows(3), { tab: TAB });
    send('loud', 'dee');
    const all = await cap.waitFor('loud', 2);
    assert.equal(all[1].payload, 'HI DEE HI DEE HI DEE!');
    assert.equal(all[1].secret, 'pw-1', 'stored credentials stay when the deploy does not resend them');
  });
});
