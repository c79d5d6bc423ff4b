import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, startServer, type TestServer } from '../../helpers/server.js';
import { deploy, type Conf } from '../../helpers/deploy.js';

const TAB = 't1';
const at = (id: string, type: string, props: Conf = {}, wires: string[][] = []): Conf => ({ id, type, z: TAB, x: 100, y: 100, wires, ...props });

/** An http-in route answering through a function: proof that the working nodes beside broken ones run. */
const route = [
  at('in', 'http in', { url: '/alive', method: 'get' }, [['ok']]),
  at('ok', 'function', { func: 'msg.payload = "alive"; return msg;', outputs: 1 }, [['res']]),
  at('res', 'http response'),
];
const brokenFunction = at('fn', 'function', { name: 'broken', func: 'return msg;;)', outputs: 1 });
const badJsonataChange = at('ch', 'change', { rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '$sum(', tot: 'jsonata' }] });
const badRegexChange = at('ch2', 'change', { rules: [{ t: 'change', p: 'payload', pt: 'msg', from: '(', fromt: 're', to: 'x', tot: 'str' }] });
const badJsonataSwitch = at('sw', 'switch', { property: 'payload', propertyType: 'msg', rules: [{ t: 'eq', v: '1 +', vt: 'jsonata' }], outputs: 1 });
const badRegexSwitch = at('sw2', 'switch', { name: 'by pattern', property: 'payload', propertyType: 'msg', rules: [{ t: 'regex', v: '[a-', vt: 'str' }], outputs: 1 });
const subflow: Conf[] = [
  { id: 'sf', type: 'subflow', name: 'wrapper', in: [{ x: 50, y: 30, wires: [{ id: 'sf-fn' }] }], out: [] },
  { id: 'sf-fn', type: 'function', z: 'sf', func: 'return {', outputs: 1, x: 100, y: 100, wires: [] },
  at('inst', 'subflow:sf'),
];

interface Report { id: string; type: string; z?: string; name?: string; error: string }

describe('GET /flows/state lists every node that cannot work as configured', () => {
  let server: TestServer;
  const state = async () => (await request(server.at('flows/state'))).body as { state: string; errors?: Report[] };
  const errorsById = async () => new Map(((await state()).errors ?? []).map((e) => [e.id, e]));

  before(async () => {
    server = await startServer();
  });
  after(() => server.dispose());

  it('reports function syntax errors, invalid JSONata and invalid regexes with id, type, z, name and the error; the rest runs', async () => {
    await deploy(server, [...route, brokenFunction, badJsonataChange, badRegexChange, badJsonataSwitch, badRegexSwitch, ...subflow], { tab: TAB });
    const s = await state();
    assert.equal(s.state, 'start');
    const errors = new Map((s.errors ?? []).map((e) => [e.id, e]));
    assert.deepEqual([...errors.keys()].sort(), ['ch', 'ch2', 'fn', 'inst-sf-fn', 'sw', 'sw2']);
    const fn = errors.get('fn')!;
    assert.deepEqual({ ...fn, error: undefined }, { id: 'fn', type: 'function', z: TAB, name: 'broken', error: undefined });
    assert.match(fn.error, /Unexpected token/);
    assert.match(errors.get('ch')!.error, /^Invalid JSONata expression: /);
    assert.match(errors.get('ch2')!.error, /^Invalid 'from' property: /);
    assert.match(errors.get('sw')!.error, /^Invalid JSONata expression: /);
    assert.equal(errors.get('sw')!.name, undefined, 'no name: none is reported');
    assert.deepEqual({ ...errors.get('sw2'), error: undefined }, { id: 'sw2', type: 'switch', z: TAB, name: 'by pattern', error: undefined });
    assert.match(errors.get('sw2')!.error, /^Invalid regular expression: /);
    // An internal node of a subflow instance is reported in the instance.
    assert.deepEqual({ ...errors.get('inst-sf-fn'), error: undefined }, { id: 'inst-sf-fn', type: 'function', z: 'inst', error: undefined });
    assert.equal((await request(server.at('alive'))).text, 'alive');
    // What the node reported is in the log too, once.
    assert.equal(server.logs.filter((l) => l.includes('"id":"sw2"') && l.includes('Invalid regular expression')).length, 1);
  });

  it('forgets a node\'s error when a deploy fixes it, of any type, and keeps the others', async () => {
    const fixedFunction = { ...brokenFunction, func: 'return msg;' };
    await deploy(server, [...route, fixedFunction, badJsonataChange, badRegexChange, badJsonataSwitch, badRegexSwitch, ...subflow], { tab: TAB, type: 'nodes' });
    assert.deepEqual([...(await errorsById()).keys()].sort(), ['ch', 'ch2', 'inst-sf-fn', 'sw', 'sw2']);
    const fixedChange = { ...badJsonataChange, rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '$sum([1,2])', tot: 'jsonata' }] };
    const fixedSwitch = { ...badRegexSwitch, rules: [{ t: 'regex', v: '[a-z]', vt: 'str' }] };
    await deploy(server, [...route, fixedFunction, fixedChange, badRegexChange, badJsonataSwitch, fixedSwitch, ...subflow], { tab: TAB, type: 'flows' });
    assert.deepEqual([...(await errorsById()).keys()].sort(), ['ch2', 'inst-sf-fn', 'sw']);
    // A full deploy rebuilds everything: the errors still there are reported again.
    await deploy(server, [...route, fixedFunction, fixedChange, badRegexChange, badJsonataSwitch, fixedSwitch, ...subflow], { tab: TAB });
    assert.deepEqual([...(await errorsById()).keys()].sort(), ['ch2', 'inst-sf-fn', 'sw']);
    const fixedTemplate = subflow.map((n) => (n.id === 'sf-fn' ? { ...n, func: 'return msg;' } : n));
    await deploy(server, [...route, fixedFunction, fixedChange, badJsonataSwitch, fixedSwitch, ...fixedTemplate], { tab: TAB, type: 'nodes' });
    assert.deepEqual([...(await errorsById()).keys()], ['sw'], 'a removed node and a fixed subflow template leave nothing');
    await deploy(server, [...route, fixedFunction, fixedChange, { ...badJsonataSwitch, d: true }, fixedSwitch, ...fixedTemplate], { tab: TAB, type: 'nodes' });
    assert.equal((await state()).errors, undefined, 'a disabled node is not running: nothing to report');
    assert.equal((await request(server.at('alive'))).text, 'alive');
  });
});
