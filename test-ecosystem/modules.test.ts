/**
 * Real Node-RED modules from the npm registry, installed through POST /nodes and run in a flow
 * (needs network; `npm run test:ecosystem`). Each module runs one small flow through its main node
 * into a capture node. The per-module outcome is printed as a table at the end (the README lists it).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { request, startServer, type TestServer } from '../test/helpers/server.js';
import { installCapture, type Capture } from '../test/helpers/capture.js';
import { TAB, captureNode, flowNode, inject, install, table, type ModuleResult } from './support.js';
import { deploy } from '../test/helpers/deploy.js';

const INSTALL_TIMEOUT = 300_000;

describe('real modules from the npm registry', { timeout: 40 * 60_000 }, () => {
  let server: TestServer;
  let capture: Capture;
  const results: ModuleResult[] = [];

  before(async () => {
    server = await startServer();
    capture = installCapture(server);
  });
  after(async () => {
    console.log(`\n${table(results)}\n`);
    await server.dispose();
  });

  /** Installs `module`, runs `check`, and records the outcome either way. */
  const moduleTest = (module: string, result: string, check: () => Promise<void>): void => {
    it(module, { timeout: INSTALL_TIMEOUT }, async () => {
      const res = await install(server, module);
      try {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.name, module);
        for (const set of res.body.nodes) assert.equal(set.loaded, true, `${set.id}: ${set.err}`);
        await check();
        results.push({ module, version: res.body.version, result: `works: ${result}` });
      } catch (err) {
        results.push({ module, version: res.body?.version ?? '-', result: `FAILS: ${String((err as Error).message).split('\n')[0]}` });
        throw err;
      }
    });
  };

  moduleTest('node-red-node-rbe', 'rbe blocks unchanged payloads (1,1,2,2,1 → 1,2,1)', async () => {
    await deploy(server, [flowNode('rbe', 'rbe', [['cap']], { func: 'rbe', gap: '', start: '', inout: 'out', property: 'payload' }), captureNode('cap', 'rbe-out')], { tab: TAB });
    for (const payload of [1, 1, 2, 2, 1]) inject(server, 'rbe', { payload });
    await capture.waitFor('rbe-out', 3);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(capture.of('rbe-out').map((m) => m.payload), [1, 2, 1]);
  });

  moduleTest('node-red-contrib-moment', 'formats a UTC ISO date; /contribapi/moment answers at load', async () => {
    const api = await request(server.at('contribapi/moment'));
    assert.equal(api.status, 200, api.text);
    assert.equal(typeof api.body.tz, 'string');
    const zones = await request(server.at('contribapi/momentzones'));
    assert.equal(zones.status, 200);
    assert.ok(zones.body.includes('Europe/London'));
    await deploy(server, [
      flowNode('mom', 'moment', [['cap']], {
        topic: '', input: 'payload', inputType: 'msg', inTz: 'UTC', outTz: 'UTC', adjAmount: 0, adjType: 'days', adjDir: 'add',
        format: 'YYYY-MM-DD HH:mm', locale: 'en', output: 'payload', outputType: 'msg',
      }),
      captureNode('cap', 'moment-out'),
    ], { tab: TAB });
    inject(server, 'mom', { payload: '2020-01-02T03:04:05Z' });
    const [msg] = await capture.waitFor('moment-out');
    assert.equal(msg.payload, '2020-01-02 03:04');
  });

  moduleTest('node-red-node-base64', 'encodes and decodes; RED._ reads its locales ("Invalid Base64 string" reaches catch)', async () => {
    await deploy(server, [
      flowNode('enc', 'base64', [['cap-enc', 'dec']], { action: '', property: 'payload' }),
      flowNode('dec', 'base64', [['cap-dec']], { action: 'b64', property: 'payload' }),
      captureNode('cap-enc', 'b64-encoded'),
      captureNode('cap-dec', 'b64-decoded'),
      flowNode('catch', 'catch', [['cap-err']], { scope: null, uncaught: false }),
      captureNode('cap-err', 'b64-errors'),
    ], { tab: TAB });
    inject(server, 'enc', { payload: 'hello' });
    assert.equal((await capture.waitFor('b64-encoded'))[0].payload, 'aGVsbG8=');
    assert.equal((await capture.waitFor('b64-decoded'))[0].payload, 'hello');
    inject(server, 'dec', { payload: '%%%' });
    const [err] = await capture.waitFor('b64-errors');
    assert.equal(err.error.message, 'Invalid Base64 string');
  });

  moduleTest('node-red-node-random', 'integers within [low, high]', async () => {
    await deploy(server, [flowNode('rnd', 'random', [['cap']], { low: '1', high: '6', inte: 'true', property: 'payload' }), captureNode('cap', 'random-out')], { tab: TAB });
    for (let i = 0; i < 20; i++) inject(server, 'rnd', { payload: null });
    const out = await capture.waitFor('random-out', 20);
    for (const m of out) assert.ok(Number.isInteger(m.payload) && m.payload >= 1 && m.payload <= 6, String(m.payload));
  });

  moduleTest('node-red-contrib-credentials', 'credentials deployed inline reach msg; GET /flows omits them', async () => {
    await deploy(server, [
      flowNode('cred', 'credentials', [['cap']], { props: [{ type: 'msg', value: 'secret' }], credentials: { creds: JSON.stringify([{ value: 's3cret' }]) } }),
      captureNode('cap', 'cred-out'),
    ], { tab: TAB });
    inject(server, 'cred', { payload: 1 });
    assert.equal((await capture.waitFor('cred-out'))[0].secret, 's3cret');
    const flows = await request(server.at('flows'));
    assert.equal(flows.text.includes('s3cret'), false);
  });

  moduleTest('node-red-contrib-bool-gate', 'and-gate is TRUE only when both topics are true', async () => {
    const rule = (topic: string) => ({ topic, property: 'payload', propertyType: 'msg', t: 'true', v: '', vt: 'str' });
    await deploy(server, [
      flowNode('and', 'and-gate', [['cap']], { rules: [rule('a'), rule('b')], gateType: 'and', emitOnlyIfTrue: false, outputTopic: 'gate' }),
      captureNode('cap', 'gate-out'),
    ], { tab: TAB });
    await capture.waitFor('gate-out', 1);
    inject(server, 'and', { topic: 'a', payload: true });
    inject(server, 'and', { topic: 'b', payload: true });
    const out = await capture.waitFor('gate-out', 3);
    assert.deepEqual(out.map((m) => m.bool), [false, false, true]);
  });

  moduleTest('node-red-node-msgpack', 'object → msgpack Buffer → object', async () => {
    await deploy(server, [
      flowNode('pack', 'msgpack', [['cap-packed', 'unpack']], { property: 'payload' }),
      flowNode('unpack', 'msgpack', [['cap-unpacked']], { property: 'payload' }),
      captureNode('cap-packed', 'msgpack-packed'),
      captureNode('cap-unpacked', 'msgpack-unpacked'),
    ], { tab: TAB });
    inject(server, 'pack', { payload: { a: 1, b: ['x', 2] } });
    assert.ok(Buffer.isBuffer((await capture.waitFor('msgpack-packed'))[0].payload));
    assert.deepEqual((await capture.waitFor('msgpack-unpacked'))[0].payload, { a: 1, b: ['x', 2] });
  });

  moduleTest('node-red-contrib-cron-plus', 'a per-second schedule fires; persistence dir in userDir; admin routes answer', async () => {
    assert.ok((await stat(path.join(server.userDir, 'cronplusdata'))).isDirectory());
    await deploy(server, [
      flowNode('cron', 'cronplus', [['cap']], {
        outputField: 'payload', timeZone: '', persistDynamic: false, commandResponseMsgOutput: 'output1', outputs: 1,
        options: [{ name: 'tick', topic: 'tick', payloadType: 'str', payload: 'tock', expressionType: 'cron', expression: '* * * * * * *' }],
      }),
      captureNode('cap', 'cron-out'),
    ], { tab: TAB });
    const [msg] = await capture.waitFor('cron-out', 1, 5000);
    assert.equal(msg.topic, 'tick');
    assert.equal(msg.payload, 'tock');
    const missing = await request(server.at('cronplusinject/no-such-node'), { method: 'POST' });
    assert.equal(missing.status, 404);
    assert.equal(missing.text, 'Not Found');
    const injected = await request(server.at('cronplusinject/cron'), { method: 'POST' });
    assert.equal(injected.status, 200);
    assert.equal(injected.text, 'OK');
    await deploy(server, [], { tab: TAB });
  });

  moduleTest('node-red-contrib-loop-processing', 'array-loop iterates an array and exits with the key reset', async () => {
    await deploy(server, [
      flowNode('loop', 'array-loop', [['cap-exit'], ['cap-body']], { key: 'loopKey', keyType: 'msg', array: 'items', arrayType: 'msg', reset: true, resetValue: 'value-null' }),
      captureNode('cap-body', 'loop-body', [['loop']], true),
      captureNode('cap-exit', 'loop-exit'),
    ], { tab: TAB });
    inject(server, 'loop', { items: ['a', 'b', 'c'] });
    const [exit] = await capture.waitFor('loop-exit');
    // One message object travels round the loop (as in Node-RED), so count the passes.
    assert.equal(capture.of('loop-body').length, 3);
    assert.equal(exit.payload, 'c');
    assert.equal(exit.loopKey, null);
  });

  moduleTest('node-red-node-data-generator', 'dummy-json template → JSON payload (RED.library.register at load)', async () => {
    await deploy(server, [
      flowNode('gen', 'data-generator', [['cap']], { field: 'payload', fieldType: 'msg', syntax: 'json', template: '{"n": {{int 1 5}}, "who": "{{firstName}}"}' }),
      captureNode('cap', 'gen-out'),
    ], { tab: TAB });
    inject(server, 'gen', { payload: null });
    const [msg] = await capture.waitFor('gen-out');
    assert.ok(msg.payload.n >= 1 && msg.payload.n <= 5);
    assert.equal(typeof msg.payload.who, 'string');
  });

  moduleTest('node-red-contrib-env', 'process-env reads a variable', async () => {
    process.env.RUNNEL_ECOSYSTEM_VAR = 'from-the-environment';
    await deploy(server, [flowNode('env', 'process-env', [['cap']], { key: 'RUNNEL_ECOSYSTEM_VAR', topic: '' }), captureNode('cap', 'env-out')], { tab: TAB });
    inject(server, 'env', { payload: null });
    assert.equal((await capture.waitFor('env-out'))[0].payload, 'from-the-environment');
  });

  moduleTest('node-red-contrib-counter', 'step and upper limit, msg.increment/decrement/reset; split mode sends the count on output 1', async () => {
    await deploy(server, [
      flowNode('single', 'counter', [['cap-single']], { init: '0', step: '2', lower: null, upper: '5', mode: 'increment', outputs: '1' }),
      flowNode('split', 'counter', [['cap-count'], ['cap-orig']], { init: '10', step: '1', lower: null, upper: '12', mode: 'increment', outputs: '2' }),
      captureNode('cap-single', 'counter-single'),
      captureNode('cap-count', 'counter-count'),
      captureNode('cap-orig', 'counter-orig'),
    ], { tab: TAB });
    // A reset applies after the step, so {reset: true} lands on init whatever the count was.
    const inputs = [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }, { reset: true }, { increment: 3 }, { decrement: 1 }, { reset: 4 }, { increment: 9 }];
    for (const msg of inputs) inject(server, 'single', msg);
    const single = await capture.waitFor('counter-single', inputs.length);
    assert.deepEqual(single.map((m) => m.count), [2, 4, 5, 0, 3, 2, 4, 5]);
    assert.deepEqual(single.map((m) => m.countUpperLimitReached ?? false), [false, false, true, false, false, false, false, true]);
    assert.equal(single[0].payload, 'a');

    for (const msg of [{ payload: 'x' }, { payload: 'y' }, { payload: 'z' }, { payload: 'r', reset: true }, { payload: 'i', increment: 2 }]) inject(server, 'split', msg);
    const counts = await capture.waitFor('counter-count', 5);
    const originals = await capture.waitFor('counter-orig', 5);
    assert.deepEqual(counts.map((m) => m.payload), [11, 12, 12, 10, 12]);
    assert.deepEqual(counts.map((m) => m.countUpperLimitReached ?? false), [false, false, true, false, false]);
    assert.deepEqual(originals.map((m) => m.payload), ['x', 'y', 'z', 'r', 'i']);
    assert.equal(originals[0].count, undefined);
  });

  moduleTest('node-red-contrib-stoptimer', 'sends [msg, payloadval] after 1 s; "stop" cancels, sends "stopped" on output 2, red "stopped" status', async () => {
    await deploy(server, [
      flowNode('timer', 'stoptimer', [['cap-1'], ['cap-2']], { units: 'Second', duration: '1', payloadtype: 'num', payloadval: '42' }),
      captureNode('cap-1', 'timer-1'),
      captureNode('cap-2', 'timer-2'),
      flowNode('watch', 'status', [['cap-status']], { scope: ['timer'] }),
      captureNode('cap-status', 'timer-status'),
    ], { tab: TAB });
    inject(server, 'timer', { payload: 'go' });
    // Timers fire in expiry order, so this one always runs before the node's 1 s timer.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(capture.of('timer-1').length, 0);
    const [first] = await capture.waitFor('timer-1');
    const [extra] = await capture.waitFor('timer-2');
    assert.equal(first.payload, 'go');
    assert.equal(first._timerpass, true);
    assert.equal(extra.payload, 42);

    inject(server, 'timer', { payload: 'again' });
    inject(server, 'timer', { payload: 'stop' });
    const second = await capture.waitFor('timer-2', 2);
    assert.equal(second[1].payload, 'stopped');
    // Past the cancelled timer's due time, output 1 still has only the first message.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(capture.of('timer-1').length, 1);
    assert.equal(capture.of('timer-2').length, 2);
    const statuses = capture.of('timer-status').map(({ status: { fill, shape, text } }) => ({ fill, shape, text }));
    const clear = { fill: undefined, shape: undefined, text: undefined };
    const running = { fill: 'green', shape: 'dot', text: 'running' };
    assert.deepEqual(statuses, [clear, running, clear, clear, running, clear, { fill: 'red', shape: 'ring', text: 'stopped' }]);
  });

  moduleTest('node-red-contrib-uuid', 'v4 and v5 (dns, example.com) uuids; fieldType flow stores into flow context; a missing version reaches catch', async () => {
    const uuid = (id: string, wires: string[][], props: Record<string, unknown>) =>
      flowNode(id, 'uuid', wires, { namespaceType: '', namespace: '', namespaceCustom: '', field: 'payload', fieldType: 'msg', ...props });
    await deploy(server, [
      uuid('v4', [['cap-v4']], { uuidVersion: 'v4' }),
      uuid('v5', [['cap-v5']], { uuidVersion: 'v5', namespaceType: 'dns', namespace: 'example.com' }),
      uuid('to-flow', [['read']], { uuidVersion: 'v5', namespaceType: 'dns', namespace: 'example.com', field: 'stored', fieldType: 'flow' }),
      flowNode('read', 'change', [['cap-flow']], { rules: [{ t: 'set', p: 'fromFlow', pt: 'msg', to: 'stored', tot: 'flow' }] }),
      uuid('none', [['cap-none']], { uuidVersion: '' }),
      captureNode('cap-v4', 'uuid-v4'),
      captureNode('cap-v5', 'uuid-v5'),
      captureNode('cap-flow', 'uuid-flow'),
      captureNode('cap-none', 'uuid-none'),
      flowNode('catch', 'catch', [['cap-err']], { scope: null, uncaught: false }),
      captureNode('cap-err', 'uuid-errors'),
    ], { tab: TAB });
    inject(server, 'v4', { payload: null });
    assert.match((await capture.waitFor('uuid-v4'))[0].payload, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    inject(server, 'v5', { payload: null });
    assert.equal((await capture.waitFor('uuid-v5'))[0].payload, 'cfbff0d1-9375-5685-968c-48ce8b15ae17');
    inject(server, 'to-flow', { payload: 'kept' });
    const [stored] = await capture.waitFor('uuid-flow');
    assert.equal(stored.payload, 'kept');
    assert.equal(stored.fromFlow, 'cfbff0d1-9375-5685-968c-48ce8b15ae17');
    inject(server, 'none', { payload: 'no version' });
    const [err] = await capture.waitFor('uuid-errors');
    assert.equal(err.error.message, 'No UUID Version was provided');
    assert.equal(err.error.source.id, 'none');
    assert.equal(err.payload, 'no version');
    assert.equal(capture.of('uuid-none').length, 0);
  });
});
