import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, tempDir } from '../helpers/server.js';
import { killRunnels, spawnRunnel, type RunnelProcess } from '../helpers/process.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * RUNNEL_STORAGE_URL carries the database password. A real `runnel start` on PostgreSQL, given it in
 * its environment, serves a flow that tries every way a flow reads the environment: env.get, a
 * global env entry of type env, $env in JSONata, env-typed and ${…} properties, process.env with
 * functionAllowHostAccess, and a child process started by an exec node.
 */
const PASSWORD = 'db-password-flows-must-not-see';

let dir: string;
let pg: TestPostgres;
let runnel: RunnelProcess;
before(async () => {
  dir = await tempDir();
  pg = await startPostgres();
  const url = pg.url.replace('postgresql://runnel@', `postgresql://runnel:${PASSWORD}@`);
  runnel = await spawnRunnel(dir, { functionAllowHostAccess: true }, [], { RUNNEL_STORAGE_URL: url, RUNNEL_SECRETS_CONTROL: 'visible' });
});
after(async () => {
  killRunnels();
  await pg?.dispose();
  await removeDir(dir);
});

const COLLECT = `msg.reads = Object.assign(msg.reads, {
  envGet: env.get('RUNNEL_STORAGE_URL'),
  globalEnvTyped: env.get('DB'),
  processEnv: process.env.RUNNEL_STORAGE_URL,
  control: env.get('RUNNEL_SECRETS_CONTROL'),
});
return msg;`;

describe('Runnel\'s own secret environment variables stay out of flows', () => {
  test('RUNNEL_STORAGE_URL is not readable through env.get, $env, env properties, process.env or a child process', async () => {
    await deploy(runnel, [
      { id: 'gc', type: 'global-config', env: [{ name: 'DB', value: 'RUNNEL_STORAGE_URL', type: 'env' }] },
      { id: 'in', type: 'http in', z: 't', url: '/reads', method: 'get', wires: [['set']] },
      {
        id: 'set', type: 'change', z: 't', wires: [['collect']], rules: [
          { t: 'set', p: 'reads', pt: 'msg', to: '{}', tot: 'json' },
          { t: 'set', p: 'reads.jsonata', pt: 'msg', to: "$env('RUNNEL_STORAGE_URL')", tot: 'jsonata' },
          { t: 'set', p: 'reads.envTyped', pt: 'msg', to: 'RUNNEL_STORAGE_URL', tot: 'env' },
          { t: 'set', p: 'reads.template', pt: 'msg', to: 'url=${RUNNEL_STORAGE_URL}', tot: 'env' },
        ],
      },
      { id: 'collect', type: 'function', z: 't', func: COLLECT, outputs: 1, wires: [['exec']] },
      { id: 'exec', type: 'exec', z: 't', command: 'env', addpay: '', append: '', useSpawn: 'false', timer: '', winHide: false, wires: [['merge'], [], []] },
      { id: 'merge', type: 'function', z: 't', func: 'msg.reads.child = msg.payload; msg.payload = msg.reads; return msg;', outputs: 1, wires: [['out']] },
      { id: 'out', type: 'http response', z: 't', statusCode: '', headers: {}, wires: [] },
    ], { tab: 't' });
    const res = await request(new URL('reads', runnel.url).href);
    assert.equal(res.status, 200, res.text);
    const reads = res.body as Record<string, unknown>;
    assert.equal(reads.control, 'visible', 'the environment is readable: only the secret is hidden');
    assert.match(String(reads.child), /RUNNEL_SECRETS_CONTROL=visible/, 'the exec node ran env');
    for (const [way, value] of Object.entries(reads)) assert.ok(!String(value).includes(PASSWORD), `${way} showed the database password: ${String(value)}`);
    // JSON drops the undefined answers: env.get, the global entry and process.env read nothing.
    const { child: _child, control: _control, ...hidden } = reads;
    assert.deepEqual(hidden, { jsonata: '', envTyped: '', template: 'url=' });
  });
});
