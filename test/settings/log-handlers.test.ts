/**
 * Node-RED's custom loggers (`logging.<name>.handler`) and the console's `audit` switch, through
 * a real server: a deploy and a node's warning reach a handler as Node-RED's log objects.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveSettings, SettingsError } from '../../src/settings/settings.js';
import { deploy } from '../helpers/deploy.js';
import { eventually, request, startServer } from '../helpers/server.js';

type Entry = Record<string, unknown> & { level: number; msg: unknown; timestamp: number };

/** A handler as settings.js gives it: `handler(config)` returns the function that gets each entry. */
function collector(config: Record<string, unknown>) {
  const entries: Entry[] = [];
  const configs: unknown[] = [];
  const handler = (c: unknown) => {
    configs.push(c);
    return (entry: Entry) => entries.push(entry);
  };
  return { entries, configs, setting: { ...config, handler } };
}

const FLOW = [
  { id: 't1', type: 'tab', label: 'T' },
  { id: 'f1', type: 'function', z: 't1', name: 'login', func: 'node.warn("careful"); node.debug("detail"); return msg;', outputs: 1, wires: [[]] },
  { id: 'i1', type: 'inject', z: 't1', once: true, onceDelay: 0.01, repeat: '', wires: [['f1']] },
];

describe('logging.<name>.handler', { timeout: 30_000 }, () => {
  it('gets Node-RED-shaped entries at Node-RED\'s levels, up to its level, with audit entries when audit is on', async () => {
    const audited = collector({ level: 'warn', audit: true, metrics: false });
    const verbose = collector({ level: 'debug' });
    const server = await startServer({ logging: { console: { level: 'info', audit: false, metrics: false }, audited: audited.setting, verbose: verbose.setting } });
    try {
      assert.equal(audited.configs.length, 1, 'handler(config) is called once');
      assert.equal((audited.configs[0] as { level: string }).level, 'warn');
      await deploy(server, FLOW);
      const warning = await eventually(() => {
        const found = audited.entries.find((e) => e.msg === 'careful');
        assert.ok(found);
        return found;
      });
      assert.equal(warning.level, 30);
      assert.deepEqual([warning.type, warning.id, warning.name, warning.z, warning.path], ['function', 'f1', 'login', 't1', 't1']);
      assert.equal(typeof warning.timestamp, 'number');
      const deployed = audited.entries.find((e) => e.event === 'flows.set');
      assert.ok(deployed, 'an audit entry with its event');
      assert.equal(deployed.level, 98);
      assert.ok(audited.entries.every((e) => e.level <= 30 || e.level === 98), 'nothing above warn but audit');

      await eventually(() => verbose.entries.some((e) => e.msg === 'detail' && e.level === 50));
      assert.ok(verbose.entries.some((e) => e.level === 40), 'info entries at 40');
      assert.ok(verbose.entries.every((e) => e.level !== 98), 'no audit entries unless audit is on');
      // logging.console.audit: false leaves the audit lines out of the console, as in Node-RED.
      assert.ok((await request(server.at('flows'))).status === 200);
      assert.ok(server.logs.every((line) => !line.startsWith('{"level":45,')), 'no audit line on the console');
      assert.ok(server.logs.some((line) => line.includes('careful')));
    } finally {
      await server.dispose();
    }
  });

  it('refuses a handler that is not a function and a level Node-RED does not have', () => {
    assert.throws(() => resolveSettings({ logging: { file: { handler: 'file.log' } } }), (e: unknown) => e instanceof SettingsError && /logging\.file\.handler must be a function/.test(e.message));
    assert.throws(() => resolveSettings({ logging: { file: { level: 'loud', handler: () => () => {} } } }), /logging\.file\.level must be one of off, fatal/);
  });
});
