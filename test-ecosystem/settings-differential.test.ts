/**
 * GET /settings compared with Node-RED 4.1.15: both systems started with the same settings (the
 * bench's, plus each case's), and every key Node-RED answers must be in Runnel's answer with the
 * same value — the fields the editor, node-red-admin and dashboards read. Runnel may add keys of
 * its own (`runnel`, `state`, its module policy lists).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { login } from '../bench/admin-client.js';
import { startSystem, type RunningSystem, type SystemEnv } from '../bench/systems.js';
import { systemEnv } from './differential/peers.js';

type Json = unknown;

/** Where `actual` lacks or differs from something `expected` has, as JSON paths. */
function missingFrom(expected: Json, actual: Json, at = '$'): string[] {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${at}: ${JSON.stringify(actual)}, Node-RED: ${JSON.stringify(expected)}`];
    return Object.entries(expected).flatMap(([k, v]) => missingFrom(v, (actual as Record<string, Json>)[k], `${at}.${k}`));
  }
  return JSON.stringify(expected) === JSON.stringify(actual) ? [] : [`${at}: ${JSON.stringify(actual)}, Node-RED: ${JSON.stringify(expected)}`];
}

async function getSettings(system: RunningSystem, token?: string): Promise<Record<string, Json>> {
  const res = await fetch(`${system.base}settings`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200, `${system.kind} GET /settings`);
  return (await res.json()) as Record<string, Json>;
}

interface SettingsCase {
  name: string;
  settings(env: SystemEnv): Record<string, unknown>;
  /** Whether to ask with the admin's token (else without one). */
  asAdmin: boolean;
}

const cases: SettingsCase[] = [
  {
    name: 'adminAuth on, with the settings the editor reads set',
    asAdmin: true,
    settings: () => ({
      editorTheme: {
        palette: { catalogues: [], editable: false, categories: ['function', 'common'] },
        tours: false,
        codeEditor: { lib: 'ace' },
        markdownEditor: {},
        mermaid: { enabled: false },
        projects: { enabled: false },
      },
      paletteCategories: ['subflows', 'common', 'function'],
      nodeDefaults: { inject: { repeat: '' } },
      diagnostics: { enabled: false },
      runtimeState: { enabled: true, ui: true },
      flowFilePretty: true,
      contextStorage: { default: { module: 'memory' }, file: { module: 'localfilesystem' } },
      functionExternalModules: false,
      functionTimeout: 5,
      tlsConfigDisableLocalFiles: true,
      httpNodeRoot: '/api',
    }),
  },
  {
    name: 'adminAuth with anonymous read access, asked without a token',
    asAdmin: false,
    settings: (env) => ({
      adminAuth: { type: 'credentials', users: [{ username: env.users.admin, password: env.users.hash, permissions: '*' }], default: { permissions: 'read' } },
      functionTimeout: 0,
      externalModules: { palette: { allowInstall: false } },
    }),
  },
  { name: 'adminAuth off', asAdmin: false, settings: () => ({ adminAuth: undefined, functionTimeout: 0 }) },
  { name: 'adminAuth off, editor disabled', asAdmin: false, settings: () => ({ adminAuth: undefined, disableEditor: true }) },
];

describe('GET /settings: Runnel answers what Node-RED answers', { timeout: 600_000 }, () => {
  let env: SystemEnv;

  before(async () => {
    env = await systemEnv((line) => console.log(line));
  }, { timeout: 600_000 });

  for (const c of cases) {
    describe(c.name, () => {
      const systems: RunningSystem[] = [];
      after(() => Promise.all(systems.map((s) => s.stop())));

      it('has every key of Node-RED\'s answer, with its value', { timeout: 120_000 }, async () => {
        const caseEnv = { ...env, settings: c.settings(env) };
        const [red, runnel] = await Promise.all([startSystem('node-red', caseEnv), startSystem('runnel', caseEnv)]);
        systems.push(red, runnel);
        const token = async (s: RunningSystem) => (c.asAdmin ? login(s.base, env.users.admin, env.users.password) : undefined);
        const expected = await getSettings(red, await token(red));
        const actual = await getSettings(runnel, await token(runnel));
        assert.ok(Object.keys(expected).length >= 2, JSON.stringify(expected));
        assert.deepEqual(missingFrom(expected, actual), [], `Node-RED: ${JSON.stringify(expected, null, 1)}\nRunnel: ${JSON.stringify(actual, null, 1)}`);
      });
    });
  }
});
