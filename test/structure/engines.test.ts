import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import Fastify from 'fastify';
import { ROOT } from '../helpers/process.js';

/**
 * package.json's `engines` is a promise to users: every package npm installs must run on the oldest
 * Node.js it admits, or `npm ci` warns EBADENGINE there (it did: cookie@2 via fastify's
 * light-my-request needs Node 22, so package.json overrides it with cookie 1.1, which has the same
 * `stringifySetCookie`). The lock file records each package's own `engines`, so this is checked
 * without installing anything. Development tools (eslint needs 20.19) need only run where the
 * tests run.
 */
interface LockPackage {
  version?: string;
  dev?: boolean;
  engines?: { node?: string } | string[];
}

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockPackage> };

function nodeRange(entry: LockPackage): string | undefined {
  return entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
}

function refusing(version: string, include: (entry: LockPackage) => boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([name, entry]) => name !== '' && include(entry))
    .flatMap(([name, entry]) => {
      const range = nodeRange(entry);
      return range && !semver.satisfies(version, range) ? [`${name}@${entry.version} needs node ${range}`] : [];
    });
}

describe('Node.js versions the installed packages support', () => {
  it('every runtime dependency runs on the oldest Node.js package.json admits', () => {
    const oldest = semver.minVersion(pkg.engines.node);
    assert.ok(oldest, `engines.node ${pkg.engines.node} has a lowest version`);
    assert.deepEqual(refusing(oldest.version, (entry) => !entry.dev), []);
  });

  it('admits the Node.js lines Runnel is tested on (26, the active LTS; 24 and 22; 20, the machine\'s), each from its first release every runtime dependency runs on', () => {
    const lines = new semver.Range(pkg.engines.node).set.map((comparators) => semver.minVersion(comparators.map((c) => c.value).join(' '))!);
    assert.deepEqual(lines.map((v) => v.major), [20, 22, 24, 26]);
    for (const first of lines) assert.deepEqual(refusing(first.version, (entry) => !entry.dev), [], `on Node.js ${first.version}`);
  });

  it('every package, development tools included, runs on this Node.js (npm ci has no EBADENGINE)', () => {
    assert.ok(semver.satisfies(process.version, pkg.engines.node), `${process.version} is within engines.node ${pkg.engines.node}`);
    assert.deepEqual(refusing(process.version, () => true), []);
  });

  it('Fastify injects requests with cookies through the overridden cookie package', async () => {
    const app = Fastify();
    app.get('/echo', async (request) => ({ cookie: request.headers.cookie }));
    try {
      const res = await app.inject({ url: '/echo', cookies: { session: 'a b', theme: 'dark' } });
      assert.deepEqual(res.json(), { cookie: 'session=a%20b; theme=dark' });
    } finally {
      await app.close();
    }
  });
});
