import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/server.js';
import { node, type Conf, flowSuite } from './flow.js';
import { deploy } from '../helpers/deploy.js';

const NODE = JSON.stringify(process.execPath);
const execNode = (id: string, command: string, extra: Conf = {}) =>
  node(id, 'exec', { command, addpay: '', append: '', useSpawn: 'false', timer: '', oldrc: false, winHide: false, ...extra }, [[`${id}-out`], [`${id}-err`], [`${id}-rc`]]);
const captures = (...ids: string[]) => ids.flatMap((id) => [`${id}-out`, `${id}-err`, `${id}-rc`]).map((id) => node(id, 'test-capture'));

/** The exec nodes under test on tab t1, with a catch node feeding capture `errors`. */
const execFlows = (nodes: Conf[]): Conf[] => [
  { id: 't1', type: 'tab', label: 'exec' }, ...nodes, node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]), node('errors', 'test-capture'),
];

describe('exec node', () => {
  const t = flowSuite(() => execFlows([
    execNode('echo', `${NODE} -e "console.log(process.argv.slice(1).join('|'))"`, { addpay: 'payload', append: 'tail' }),
    execNode('fail', `${NODE} -e "console.error('bad'); process.exit(3)"`),
    execNode('slow', `${NODE} -e "setTimeout(() => {}, 20000)"`, { timer: '0.3' }),
    execNode('spawn', `${NODE} -e "console.log('out'); console.error('err'); process.exit(2)"`, { useSpawn: 'true' }),
    execNode('hold', `${NODE} -e "console.log(process.pid); setTimeout(() => {}, 20000)"`, { useSpawn: 'true' }),
    execNode('spawn-ok', `${NODE} -e "process.exit(0)"`, { useSpawn: 'true' }),
    execNode('spawn-missing', 'runnel-no-such-command', { useSpawn: 'true' }),
    node('spawn-ok-status', 'status', { scope: ['spawn-ok'] }, [['spawn-ok-statuses']]),
    node('spawn-ok-statuses', 'test-capture'),
    ...captures('echo', 'fail', 'slow', 'spawn', 'hold', 'spawn-ok', 'spawn-missing'),
  ]));
  const { receive } = t;

  test('exec mode runs the command line through a shell with the payload and append arguments', async () => {
    receive('echo', { _msgid: 'e', payload: 'hello world' });
    const [rc] = await t.capture.waitFor('echo-rc');
    assert.deepEqual(rc, { _msgid: 'e', payload: { code: 0 } });
    assert.deepEqual(t.capture.of('echo-out'), [{ _msgid: 'e', payload: 'hello|world|tail\n', rc: { code: 0 } }]);
    assert.deepEqual(t.capture.of('echo-err'), []);
  });

  test('a failing command reports stderr and its exit code', async () => {
    receive('fail', { _msgid: 'f', payload: 'ignored' });
    const [rc] = await t.capture.waitFor('fail-rc');
    const expected = { code: 3, message: `Command failed: ${NODE} -e "console.error('bad'); process.exit(3)"\nbad\n` };
    assert.deepEqual(rc, { _msgid: 'f', payload: expected });
    assert.deepEqual(t.capture.of('fail-err'), [{ _msgid: 'f', payload: 'bad\n', rc: expected }]);
    assert.deepEqual(t.capture.of('fail-out'), [{ _msgid: 'f', payload: '', rc: expected }]);
  });

  test('a command running past the timeout is killed', async () => {
    receive('slow', { _msgid: 's' });
    const [rc] = await t.capture.waitFor('slow-rc', 1, 10_000);
    assert.equal(rc.payload.code, null);
    assert.equal(rc.payload.signal, 'SIGTERM');
  });

  test('spawn mode streams stdout and stderr and ends with the return code', async () => {
    receive('spawn', { _msgid: 'p', payload: 'x' });
    const [rc] = await t.capture.waitFor('spawn-rc');
    assert.deepEqual(rc, { _msgid: 'p', payload: { code: 2 } });
    assert.deepEqual(t.capture.of('spawn-out'), [{ _msgid: 'p', payload: 'out\n' }]);
    assert.deepEqual(t.capture.of('spawn-err'), [{ _msgid: 'p', payload: 'err\n' }]);
  });

  test('spawn mode ends a clean exit with the status "rc:0", as Node-RED does', async () => {
    receive('spawn-ok', { _msgid: 'k' });
    const [rc] = await t.capture.waitFor('spawn-ok-rc');
    assert.deepEqual(rc, { _msgid: 'k', payload: { code: 0 } });
    const statuses = await t.capture.waitFor('spawn-ok-statuses', 2);
    assert.deepEqual(statuses.map((m) => [m.status.fill, m.status.shape, m.status.text]).at(-1), ['yellow', 'dot', 'rc:0']);
  });

  test('spawn mode: an unknown command is no error for catch nodes, only a negative return code', async () => {
    const before = t.capture.of('errors').length;
    receive('spawn-missing', { _msgid: 'u', payload: 'x' });
    const [rc] = await t.capture.waitFor('spawn-missing-rc');
    assert.deepEqual(rc, { _msgid: 'u', payload: { code: -2 } });
    assert.equal(t.capture.of('errors').length, before);
  });

  test('closing the node kills its running commands', async () => {
    receive('hold', { _msgid: 'h' });
    const [out] = await t.capture.waitFor('hold-out');
    const pid = Number(out.payload);
    assert.ok(pid > 0);
    await deploy(t.server, [{ id: 't1', type: 'tab', label: 'exec' }]);
    await eventually(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    });
  });
});

describe('exec node with execAllowed: false', () => {
  const t = flowSuite(() => execFlows([execNode('off', `${NODE} -e "1"`), ...captures('off')]), { execAllowed: false });

  test('refuses to run, with an error catch nodes see', async () => {
    t.receive('off', { _msgid: 'x', payload: 'rm -rf /' });
    const [err] = await t.capture.waitFor('errors');
    assert.equal(err.error.message, 'Error: exec node disabled: the execAllowed setting is false');
    assert.deepEqual(t.capture.of('off-rc'), []);
  });
});
