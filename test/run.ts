import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suiteFiles, testFiles, type Suite } from './suites.js';

/**
 * `node dist/test/run.js [unit|e2e]`: runs one suite of compiled tests with node's test runner, in
 * spec format, then the slowest files (durations.js). Two files at a time: the machine this runs on
 * has 2 cores, and most tests wait on sockets and child processes rather than compute. The e2e
 * suite runs one file at a time: each starts several processes (a browser, PostgreSQL and Runnels)
 * and two of them side by side on 2 cores only make both slow enough to time out.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const suite = (process.argv[2] ?? 'unit') as Suite;
if (suite !== 'unit' && suite !== 'e2e') throw new Error(`unknown suite ${suite}: unit or e2e`);
const files = suiteFiles(suite, testFiles(here)).map((f) => path.join(here, f));
const args = [
  '--test', `--test-concurrency=${suite === 'e2e' ? 1 : 2}`,
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  `--test-reporter=${path.join(here, 'durations.js')}`, '--test-reporter-destination=stdout',
  ...files,
];
const child = spawn(process.execPath, args, { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
