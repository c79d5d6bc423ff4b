import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModuleInfo, NodeSetInfo } from '../../src/registry/registry.js';
import { NodeResources } from '../../src/server/editor/node-resources.js';

/**
 * `GET /nodes` (text/html) answers every set's HTML in the language the client asks for (`?lng=`
 * or Accept-Language), and each language's answer was kept for good: a `read` token asking for 400
 * made-up languages (`en-x0001`, …) grew the process by 250 MB (575 KB each), never given back.
 */

const inject: NodeSetInfo = { id: 'node-red/inject', name: 'inject', module: 'node-red', version: '1.0.0', types: ['inject'], enabled: true, loaded: true };
const core: ModuleInfo = { name: 'node-red', version: '1.0.0', builtin: true, sets: new Map([['inject', inject]]), plugins: new Map() };
const nodes = {
  listSets: () => [inject],
  listModules: () => [core],
  getModule: (name: string) => (name === 'node-red' ? core : undefined),
  getSet: (id: string) => (id === inject.id ? inject : undefined),
};

test('node HTML is kept for a few languages only, however many a client makes up', async () => {
  const resources = new NodeResources(nodes as unknown as ConstructorParameters<typeof NodeResources>[0]);
  const english = await resources.allHtml('en-US');
  assert.match(english, /\[red-module:node-red\/inject\]/);
  for (let i = 0; i < 200; i++) assert.equal(await resources.allHtml(`en-x${i.toString(36).padStart(4, '0')}`), english);
  assert.ok(resources.cachedLanguages <= 8, `${resources.cachedLanguages} languages' HTML kept`);
  // A language dropped from the cache is read again, the same.
  assert.equal(await resources.allHtml('en-US'), english);
  const german = await resources.allHtml('de');
  assert.notEqual(german, english, 'German help was not served');
});
