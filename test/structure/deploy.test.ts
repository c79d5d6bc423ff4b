import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/process.js';
import { removeDir, tempDir } from '../helpers/dirs.js';

/**
 * The deployment recipes the README gives: deploy/runnel.service (checked by systemd-analyze where
 * this machine has it, and for its hardening on every machine) and the Dockerfile (built by .ci/run
 * where a container engine runs; here, checked against the repository it copies from).
 */
const UNIT = readFileSync(path.join(ROOT, 'deploy', 'runnel.service'), 'utf8');
const DOCKERFILE = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

/** `Key=value` lines of one section (systemd allows a key more than once: every value is kept). */
function section(unit: string, name: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  let current = '';
  for (const line of unit.split('\n')) {
    const header = /^\[(\w+)\]$/.exec(line.trim());
    if (header) current = header[1];
    const m = /^(\w+)=(.*)$/.exec(line);
    if (m && current === name) keys.set(m[1], [...(keys.get(m[1]) ?? []), m[2]]);
  }
  return keys;
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

describe('deployment recipes', () => {
  const service = section(UNIT, 'Service');
  const one = (key: string) => service.get(key)?.at(-1);

  it('the systemd unit runs Runnel sandboxed, writing only its user dir', () => {
    const required: Record<string, string> = {
      NoNewPrivileges: 'true', ProtectSystem: 'strict', ProtectHome: 'true', PrivateTmp: 'true',
      ProtectKernelTunables: 'true', ProtectKernelModules: 'true', ProtectControlGroups: 'true',
      RestrictSUIDSGID: 'true', RestrictNamespaces: 'true', LockPersonality: 'true', CapabilityBoundingSet: '',
      User: 'runnel',
    };
    for (const [key, value] of Object.entries(required)) assert.equal(one(key), value, key);
    // V8 needs writable executable memory: Node.js aborts under MemoryDenyWriteExecute.
    assert.equal(service.has('MemoryDenyWriteExecute'), false);
    const exec = one('ExecStart') ?? '';
    assert.match(exec, /\bbin\/runnel\.js start\b/);
    const userDir = /--user-dir (\S+)/.exec(exec)?.[1];
    assert.ok(userDir, 'ExecStart names the user dir');
    assert.ok(one('ReadWritePaths')?.split(/\s+/).includes(userDir), `ReadWritePaths includes ${userDir}`);
    assert.equal(`/var/lib/${one('StateDirectory')}`, userDir, 'StateDirectory creates the user dir for User');
    // The stop watchdog kills Runnel nodeCloseTimeout (15 s) + 5 s after SIGTERM; systemd must wait longer.
    assert.ok(Number(one('TimeoutStopSec')) > 20, 'TimeoutStopSec');
  });

  it('systemd-analyze verify finds nothing to report in the unit', { skip: !onPath('systemd-analyze') && 'systemd-analyze is not installed' }, async () => {
    const dir = await tempDir();
    try {
      // The unit names /usr/bin/node, which verify requires to exist; this machine's node may live elsewhere.
      const file = path.join(dir, 'runnel.service');
      writeFileSync(file, UNIT.replaceAll('/usr/bin/node', process.execPath));
      const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr.trim(), '', 'no warnings (an unknown key is only a warning)');
    } finally {
      await removeDir(dir);
    }
  });

  it('the Dockerfile copies what exists, builds as npm ci does and runs bin/runnel.js unprivileged', () => {
    const copies = [...DOCKERFILE.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    assert.ok(copies.length > 0);
    for (const source of copies) assert.ok(existsSync(path.join(ROOT, source)), `COPY ${source}`);
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const source of copies) assert.ok(!ignored.includes(source), `${source} is not in .dockerignore`);
    assert.match(DOCKERFILE, /^RUN npm run prepare$/m, 'the build runs what npm ci runs after installing');
    assert.match(DOCKERFILE, /^USER node$/m);
    assert.match(DOCKERFILE, /^ENTRYPOINT \["node", "bin\/runnel\.js"\]$/m);
  });

  it('the image is built and run on the newest Node.js line engines names (the active LTS)', () => {
    const engines: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node;
    const newest = Math.max(...[...engines.matchAll(/\^(\d+)\./g)].map((m) => Number(m[1])));
    const bases = [...DOCKERFILE.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    assert.deepEqual(bases, [`node:${newest}-slim`, `node:${newest}-slim`]);
  });
});
