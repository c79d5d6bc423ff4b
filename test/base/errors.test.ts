import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERRORS } from '../../src/base/errors.js';
import { ROOT } from '../helpers/process.js';

test("README's error code table and the catalogue in src/base/errors.ts list the same codes, statuses and meanings", () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('**Error codes.**');
  assert.ok(start >= 0, 'README has an **Error codes.** table');
  const rows = readme
    .slice(start)
    .split('\n\n')[1]
    .split('\n')
    .slice(2)
    .map((line) => /^\| `(\w+)` \| (\d+) \| (.*) \|$/.exec(line))
    .map((m, i) => {
      assert.ok(m, `README error table row ${i + 1} is | \`code\` | status | meaning |`);
      return [m[1], Number(m[2]), m[3]];
    });
  assert.deepEqual(rows, Object.entries(ERRORS).map(([code, [status, meaning]]) => [code, status, meaning]));
});
