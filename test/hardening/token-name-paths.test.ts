import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';

/**
 * Round 3b: an automation token acts as the user `token:<name>`, and its name is any string. The
 * Node-RED key files of /settings/user/keys are `<user>_<key>` in projects/.sshkeys, so a token
 * named `/../../../outside/id` reached `<userDir>/outside/id_<key>`: its holder could make git use
 * a private key file of the server's (say its own ~/.ssh/id_rsa) against any remote, and, with a
 * key of its own of that name, delete that file through DELETE /settings/user/keys/<key>.
 */
let server: TestServer;
let token: string;
const outside = () => path.join(server.userDir, 'outside');
const call = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), { ...init, token });

before(async () => {
  server = await startServer({ logging: { level: 'fatal' }, editorTheme: { projects: { enabled: true } }, adminAuth: adminAuth() });
  await mkdir(outside(), { recursive: true });
  await writeFile(path.join(outside(), 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nthe server\'s own\n-----END OPENSSH PRIVATE KEY-----\n', { mode: 0o600 });
  await writeFile(path.join(outside(), 'id_rsa.pub'), 'ssh-ed25519 AAAA the server\'s own\n');
  const admin = await login(server);
  const made = await request(server.at('auth/tokens'), { method: 'POST', token: admin, json: { name: '/../../../outside/id', scope: ['*'] } });
  assert.equal(made.status, 200, made.text);
  token = made.body.token;
});
after(() => server.dispose());

test("a token's name never leads its SSH keys out of projects/.sshkeys: a file there is not its key", async () => {
  const res = await call('projects', { method: 'POST', json: { name: 'flows', git: { remotes: { origin: { url: 'ssh://git@127.0.0.1:1/x.git', keyFile: 'rsa', passphrase: '' } } } } });
  assert.deepEqual([res.status, res.body?.code], [404, 'not_found'], res.text);
});

test("deleting a token's own key of that name leaves the file out there", async () => {
  assert.equal((await call('settings/user/keys', { method: 'POST', json: { name: 'rsa' } })).status, 200);
  assert.deepEqual((await call('settings/user/keys')).body, { keys: [{ name: 'rsa' }] });
  assert.equal((await call('settings/user/keys/rsa', { method: 'DELETE' })).status, 204);
  await access(path.join(outside(), 'id_rsa'));
  await access(path.join(outside(), 'id_rsa.pub'));
});
