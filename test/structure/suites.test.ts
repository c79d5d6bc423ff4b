import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/process.js';
import { E2E, suiteFiles, testFiles } from '../suites.js';

/** `npm test` and `npm run test:e2e` split the test files between them by test/suites.ts alone. */
describe('test suites', () => {
  const files = testFiles(path.join(ROOT, 'test'), '.ts');

  it('each e2e entry still names a test file (a moved file must not slip back into npm test unnoticed)', () => {
    assert.ok(files.length > 100, `found ${files.length} test files`);
    assert.deepEqual(E2E.filter((prefix) => !files.some((f) => f.startsWith(prefix))), []);
    const e2e = suiteFiles('e2e', files);
    assert.ok(e2e.some((f) => f.startsWith('server/editor-browser')) && e2e.some((f) => f.startsWith('cluster/')));
    assert.equal(e2e.length + suiteFiles('unit', files).length, files.length);
  });

  it('npm test, test:e2e and CI run them: the whole suite on the machine\'s Node and on Node 26', () => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.match(scripts.test!, /node dist\/test\/run\.js$/);
    assert.match(scripts['test:e2e']!, /node dist\/test\/run\.js e2e$/);
    const ci = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
    const order = ['npm test', 'npm run test:e2e', 'npm run test:ecosystem'].map((line) => ci.indexOf(`\n${line}\n`));
    assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!)), `.ci/run runs npm test, test:e2e, then test:ecosystem: ${order.join(', ')}`);
    assert.match(ci, /^PATH="\$node26:\$PATH" bash -c '.*; npm test && npm run test:e2e && npm run test:ecosystem'$/m);
  });

  it('the README\'s Tests section names npm test and test:e2e side by side', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Tests'), readme.indexOf('\n## ', readme.indexOf('\n## Tests') + 1));
    for (const command of ['- `npm test` —', '- `npm run test:e2e` —']) assert.ok(section.includes(command), `README "Tests" lists ${command}`);
  });
});
