import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ADMIN_PASSWORD, READER_PASSWORD, adminAuth, login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { adminHash, readerHash } from '../helpers/users.js';
import { removeDir } from '../helpers/dirs.js';
import { filesHolding } from '../hardening/support.js';

/** /settings/user/keys as Node-RED's editor calls it: per-user SSH keys made by ssh-keygen, private keys encrypted at rest. */

describe('Projects: the users\' SSH keys (/settings/user/keys)', () => {
  let userDir: string;
  let server: TestServer;
  const tokens: Record<string, string> = {};
  const call = (who: string, p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), { ...init, token: tokens[who] });

  before(async () => {
    userDir = await tempDir();
    // A key Node-RED made for the user ada in this user dir: listed and usable as it is.
    const nodeRedKeys = path.join(userDir, 'projects', '.sshkeys');
    await mkdir(nodeRedKeys, { recursive: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'made by node-red', '-f', path.join(nodeRedKeys, 'ada_from-node-red')]);
    server = await startServer({
      editorTheme: { projects: { enabled: true } },
      credentialSecret: 'a-secret-of-the-settings',
      adminAuth: adminAuth({ users: [
        { username: 'ada', password: adminHash, permissions: '*' },
        { username: 'ada_x', password: adminHash, permissions: '*' },
        { username: 'reader', password: readerHash, permissions: 'read' },
      ] }),
    }, userDir);
    tokens.ada = await login(server, 'ada', ADMIN_PASSWORD);
    tokens.other = await login(server, 'ada_x', ADMIN_PASSWORD);
    tokens.reader = await login(server, 'reader', READER_PASSWORD, 'read');
  });
  after(async () => {
    await server.dispose();
    await removeDir(userDir);
  });

  it('generates a key pair with ssh-keygen, lists it, shows its public key, never its private key', async () => {
    const made = await call('ada', 'settings/user/keys', { method: 'POST', json: { name: 'deploy', comment: 'ada@example.test', password: '', size: 2048 } });
    assert.equal(made.status, 200, made.text);
    assert.deepEqual(made.body, { name: 'deploy' });
    const list = await call('ada', 'settings/user/keys');
    assert.deepEqual(list.body, { keys: [{ name: 'deploy' }, { name: 'from-node-red' }] });
    const pub = await call('ada', 'settings/user/keys/deploy');
    assert.equal(pub.status, 200, pub.text);
    assert.match(pub.body.publickey, /^ssh-rsa AAAA\S+ ada@example\.test\n$/);
    assert.equal(Buffer.from(pub.body.publickey.split(' ')[1], 'base64').readUInt32BE(0), 7, 'an OpenSSH public key blob');
    assert.match((await call('ada', 'settings/user/keys/from-node-red')).body.publickey, /^ssh-ed25519 \S+ made by node-red\n$/);
    assert.doesNotMatch(list.text + pub.text + made.text, /PRIVATE KEY/);
  });

  it('keeps the private key encrypted at rest: nothing in the user dir holds it in clear but Node-RED\'s own key', async () => {
    assert.deepEqual(await filesHolding(userDir, ['PRIVATE KEY']), [path.join('projects', '.sshkeys', 'ada_from-node-red: PRIVATE KEY')]);
    assert.deepEqual(await filesHolding(userDir, ['a-secret-of-the-settings']), []);
  });

  it('keeps each user\'s keys to that user, even when one user name is another\'s with "_x"', async () => {
    assert.deepEqual((await call('other', 'settings/user/keys')).body, { keys: [] });
    const theirs = await call('other', 'settings/user/keys/deploy');
    assert.deepEqual([theirs.status, theirs.body.code], [404, 'not_found'], theirs.text);
    const removed = await call('other', 'settings/user/keys/deploy', { method: 'DELETE' });
    assert.equal(removed.status, 404, removed.text);
    assert.equal((await call('other', 'settings/user/keys', { method: 'POST', json: { name: 'deploy' } })).status, 200);
    assert.deepEqual((await call('ada', 'settings/user/keys')).body.keys.map((k: { name: string }) => k.name), ['deploy', 'from-node-red']);
  });

  it('answers Node-RED\'s codes for a bad name, a taken name, a short passphrase and a bad size', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '../escape' }, 'invalid_key_name'],
      [{ name: '' }, 'invalid_key_name'],
      [{ name: 'x'.repeat(65) }, 'invalid_key_name'],
      [{ name: 7 }, 'invalid_key_name'],
      [{ name: 'deploy' }, 'key_exists'],
      [{ name: 'short', password: 'abcd' }, 'key_passphrase_too_short'],
      [{ name: 'small', size: 512 }, 'key_length_too_short'],
      [{ name: 'huge', size: 1_000_000 }, 'key_length_too_long'],
      [{ name: 'odd', size: 'big' }, 'invalid_request'],
      [{ name: 'ctl', comment: 'a\nb' }, 'invalid_request'],
    ];
    for (const [body, code] of cases) {
      const res = await call('ada', 'settings/user/keys', { method: 'POST', json: body });
      assert.deepEqual([res.status, res.body.code], [400, code], `${JSON.stringify(body)}: ${res.text}`);
    }
    assert.deepEqual((await call('ada', 'settings/user/keys')).body.keys.map((k: { name: string }) => k.name), ['deploy', 'from-node-red']);
  });

  it('needs settings.write, as Node-RED does', async () => {
    for (const [method, p] of [['GET', 'settings/user/keys'], ['GET', 'settings/user/keys/deploy'], ['POST', 'settings/user/keys'], ['DELETE', 'settings/user/keys/deploy']]) {
      const res = await call('reader', p!, { method, ...(method === 'POST' ? { json: { name: 'r' } } : {}) });
      assert.ok([401, 403].includes(res.status), `${method} ${p}: ${res.status}`);
    }
    const anonymous = await request(server.at('settings/user/keys'));
    assert.equal(anonymous.status, 401);
  });

  it('deletes a key, both its files', async () => {
    const res = await call('ada', 'settings/user/keys/deploy', { method: 'DELETE' });
    assert.equal(res.status, 204, res.text);
    assert.deepEqual((await call('ada', 'settings/user/keys')).body, { keys: [{ name: 'from-node-red' }] });
    assert.equal((await call('ada', 'settings/user/keys/deploy')).status, 404);
    assert.deepEqual((await filesHolding(path.join(userDir, 'projects', '.sshkeys', 'runnel', 'ada'), ['ssh-rsa', 'aes-256-gcm'])), []);
  });
});

/** Without adminAuth every editor is Node-RED's `__default` user. */
describe('Projects: SSH keys without adminAuth', () => {
  it('keeps the anonymous editor\'s keys as Node-RED\'s __default user\'s', async () => {
    const userDir = await tempDir();
    const dir = path.join(userDir, 'projects', '.sshkeys');
    await mkdir(dir, { recursive: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, '__default_legacy')]);
    await writeFile(path.join(dir, '__default_half'), 'a private key without its .pub is not a key pair');
    const server = await startServer({ editorTheme: { projects: { enabled: true } } }, userDir);
    try {
      assert.deepEqual((await request(server.at('settings/user/keys'))).body, { keys: [{ name: 'legacy' }] });
      assert.equal((await request(server.at('settings/user/keys'), { method: 'POST', json: { name: 'mine' } })).status, 200);
      assert.deepEqual((await request(server.at('settings/user/keys'))).body, { keys: [{ name: 'legacy' }, { name: 'mine' }] });
      // Without a credentialSecret the key that encrypts it is generated, not the one of the credentials.
      assert.deepEqual(await filesHolding(path.join(dir, 'runnel'), ['PRIVATE KEY']), []);
    } finally {
      await server.dispose();
      await removeDir(userDir);
    }
  });
});
