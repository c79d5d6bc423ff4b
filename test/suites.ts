import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * Which test files `npm test` runs and which `npm run test:e2e` runs, decided here and nowhere else.
 * `npm test` is the inner loop: everything in-process or with short-lived child processes, within
 * minutes on 2 cores. test:e2e has the suites that start heavy real components and take most of
 * the time: Chromium driving the editor, PostgreSQL with clusters of Runnel processes, SIGKILL
 * crash loops, and the two stress files of the hardening suite. A file goes to test:e2e when it
 * takes long because it starts such a component or runs thousands of rounds; the files
 * stay where they are (tests mirror src/), only this list moves them between the two commands.
 *
 * Entries are path prefixes under test/, without the extension: a folder ends with '/'.
 */
export const E2E: readonly string[] = [
  'cluster/',
  'auth/strategy-cluster',
  'server/editor-browser',
  'storage/postgres-storage.test',
  'storage/postgres-fencing.test',
  'export/postgres.test',
  'projects/projects-ssh.test',
  'crash.test',
  'storage/history-crash.test',
  // Stress rather than outside components, but minutes of CPU each: 10,000 fuzzed requests, 1,000 deploy races.
  'hardening/fuzz.test',
  'hardening/deploy-race.test',
  // Six real Runnel processes, two of them held by a runaway until the stop watchdog SIGKILLs them
  // (6 s each by design): about 30 s on a quiet machine, a minute under load.
  'hardening/function-runaways.test',
  // A storm of 240 concurrent logins checked at bcrypt cost 10: about 25 s of CPU for one test.
  'hardening/login-storm.test',
];

export type Suite = 'unit' | 'e2e';

/** `name.test.js` files under `dir` (dist/test when run, test/ for the .ts sources), relative to it, sorted. */
export function testFiles(dir: string, ext = '.js'): string[] {
  const walk = (rel: string): string[] =>
    readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
      const child = path.posix.join(rel, e.name);
      if (e.isDirectory()) return e.name === 'fixtures' ? [] : walk(child);
      return e.name.endsWith(`.test${ext}`) ? [child] : [];
    });
  return walk('').sort();
}

export const isE2e = (file: string): boolean => E2E.some((prefix) => file.startsWith(prefix));

export function suiteFiles(suite: Suite, files: string[]): string[] {
  return files.filter((f) => isE2e(f) === (suite === 'e2e'));
}
