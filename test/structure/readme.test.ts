import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/process.js';

/**
 * The README is all a newcomer has after a clone: every file it names is in the repository, nothing
 * it points to is outside it, and the error lines its Troubleshooting section quotes are the ones
 * the code writes.
 */
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The lines Troubleshooting quotes, as they appear in src/ (placeholders cut off). */
const QUOTED = [
  'cannot listen: address already in use',
  'invalid settings: ',
  'an integer port between 0 and 65535',
  'must be a bcrypt hash ($2a$/$2b$); make one with "',
  'cannot read settings file',
  'Settings Runnel does not support (ignored): ',
  'the flows run without them, and the next deploy replaces them. ',
  'Set credentialSecret to the key that encrypted them and restart',
  'are encrypted, but credentialSecret is not set and there is no generated key (_credentialSecret in .config.runtime.json): ',
  'set credentialSecret in the settings file (settings.js) to the secret they were encrypted with',
  "the stored credentials do not decrypt with this instance's key: every instance sharing a database needs the same credentialSecret",
  'Invalid username or password',
  'Too many failed login attempts; retry in ',
  'Admin authentication is not enabled',
  'Install failed: ',
  'Module not found: ',
  'is not a name this server answers to without adminAuth; add it to httpAdminAllowedHosts',
  'may not change this server',
  'cannot use the PostgreSQL database ',
  ' messages and no queue in node takes from it any more (renamed or removed?)',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

describe('README', () => {
  it('names only files the repository has, and links nothing outside it', () => {
    const named = [
      ...README.matchAll(/`((?:src|test|test-ecosystem|bench|deploy|docs|bin|\.ci)\/[^`\s*<]*)`/g),
      ...README.matchAll(/\]\((?!https?:|#)([^)]+)\)/g),
    ].map((m) => m[1]);
    assert.ok(named.length > 20, `found ${named.length} paths`);
    assert.deepEqual(named.filter((p) => p.startsWith('../') || path.isAbsolute(p)), []);
    assert.deepEqual(named.filter((p) => !existsSync(path.join(ROOT, p))), []);
    assert.doesNotMatch(README, /\.\.\/shared\//);
  });

  it("quotes Troubleshooting's error lines as the code writes them", () => {
    const start = README.indexOf('## Troubleshooting');
    assert.ok(start > 0);
    // Lines wrap in the README's source: compare with runs of white space as one space.
    const section = README.slice(start, README.indexOf('\n## ', start + 1)).replace(/\s+/g, ' ');
    const code = sources(path.join(ROOT, 'src')).map((f) => readFileSync(f, 'utf8').replaceAll("\\'", "'")).join('\n');
    for (const line of QUOTED) {
      assert.ok(section.includes(line.trim()), `Troubleshooting quotes ${JSON.stringify(line)}`);
      assert.ok(code.includes(line), `src/ writes ${JSON.stringify(line)}`);
    }
  });
});
