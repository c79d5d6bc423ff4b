import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { hashToken } from '../../src/auth/tokens.js';
import { login, request, startServer, type TestServer } from '../helpers/server.js';
import { ADMIN_PASSWORD, adminAuth, READER_PASSWORD } from '../helpers/users.js';
import { fakeClock } from '../helpers/clock.js';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  text: string;
}

/** POST with an explicit local address, so a test can speak from 127.0.0.2 as a second client. */
function post(url: string, body: string, contentType: string | undefined, localAddress = '127.0.0.1', token?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { 'content-length': Buffer.byteLength(body) };
    if (contentType) headers['content-type'] = contentType;
    if (token) headers.authorization = `Bearer ${token}`;
    const req = http.request(url, { method: 'POST', headers, localAddress, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
      });
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';
const good = { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD };

function token(server: TestServer, fields: Record<string, string>, localAddress?: string) {
  return post(server.at('auth/token'), form(fields), FORM, localAddress);
}

function assertOAuth(res: Reply, status: number, error: string, description: string) {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(res.body, { error, error_description: description });
  assert.equal(res.headers['cache-control'], 'no-store');
}

describe('auth off', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.dispose());

  test('GET /auth/login is {}', async () => {
    const res = await request(server.at('auth/login'));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});
  });

  test('/auth/token and /auth/revoke are 404 in OAuth shape', async () => {
    assertOAuth(await token(server, good), 404, 'not_found', 'Admin authentication is not enabled');
    assertOAuth(await post(server.at('auth/revoke'), form({ token: 'x' }), FORM), 404, 'not_found', 'Admin authentication is not enabled');
  });
});

test("GET /auth/login carries editorTheme.login's image and message, and its button replaces the prompts, as Node-RED's", async () => {
  const login = { image: 'logo.png', message: 'Authorised staff only' };
  const server = await startServer({ adminAuth: adminAuth(), editorTheme: { login } });
  try {
    const res = await request(server.at('auth/login'));
    assert.deepEqual(res.body, {
      type: 'credentials',
      prompts: [{ id: 'username', type: 'text', label: 'user.username' }, { id: 'password', type: 'password', label: 'user.password' }],
      image: 'theme/login/logo.png',
      loginMessage: 'Authorised staff only',
    });
  } finally {
    await server.dispose();
  }
  const button = { label: 'Sign in with Acme', url: 'https://sso.example.com/runnel', icon: 'fa-key' };
  const themed = await startServer({ adminAuth: adminAuth(), editorTheme: { login: { button } } });
  try {
    assert.deepEqual((await request(themed.at('auth/login'))).body, { type: 'credentials', prompts: [{ type: 'button', ...button }] });
  } finally {
    await themed.dispose();
  }
});

describe('auth on', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), loginThrottle: { maxFailures: 3, windowMs: 60_000 } });
  });
  after(() => server.dispose());

  test('GET /auth/login lists the credential prompts', async () => {
    const res = await request(server.at('auth/login'));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      type: 'credentials',
      prompts: [
        { id: 'username', type: 'text', label: 'user.username' },
        { id: 'password', type: 'password', label: 'user.password' },
      ],
    });
  });

  test('password grant, form or JSON, answers an uncacheable bearer token', async () => {
    const res = await token(server, good);
    assert.equal(res.status, 200, res.text);
    const body = res.body as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'token_type']);
    assert.match(body.access_token as string, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(body.expires_in, 604800);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.pragma, 'no-cache');
    for (const client_id of ['runtime-editor', 'node-red-admin', 'node-red-editor']) {
      const json = await post(server.at('auth/token'), JSON.stringify({ ...good, client_id, client_secret: 'not_available' }), 'application/json');
      assert.equal(json.status, 200, json.text);
    }
  });

  test('unknown client, missing client or wrong secret: 401 invalid_client, checked first, saying what to send', async () => {
    const clients = 'runtime-admin, runtime-editor, node-red-admin, node-red-editor, e.g. client_id=runtime-admin';
    const cases: [Record<string, string>, string][] = [
      [{ ...good, client_id: 'someone' }, `Unknown client_id "someone": send one of ${clients}`],
      [{ grant_type: 'bogus', username: 'admin', password: ADMIN_PASSWORD }, `Missing client_id: send one of ${clients}`],
      [{ ...good, client_secret: 'guess' }, 'Wrong client_secret: these clients are public, send none (or not_available)'],
      [{}, `Missing client_id: send one of ${clients}`],
    ];
    for (const [fields, description] of cases) {
      const res = await token(server, fields);
      assertOAuth(res, 401, 'invalid_client', description);
      assert.equal(res.headers['www-authenticate'], 'Basic realm="runnel"');
    }
  });

  test('grant type: missing is invalid_request, anything but password is unsupported_grant_type', async () => {
    const { grant_type: _omit, ...noGrant } = good;
    assertOAuth(await token(server, noGrant), 400, 'invalid_request', 'Missing required parameter: grant_type');
    assertOAuth(
      await token(server, { ...good, grant_type: 'client_credentials' }),
      400,
      'unsupported_grant_type',
      'Unsupported grant type: client_credentials',
    );
  });

  test('missing or non-string username/password: invalid_request', async () => {
    const { username: _u, ...noUser } = good;
    const { password: _p, ...noPassword } = good;
    assertOAuth(await token(server, noUser), 400, 'invalid_request', 'Missing required parameter: username');
    assertOAuth(await token(server, noPassword), 400, 'invalid_request', 'Missing required parameter: password');
    const numeric = await post(server.at('auth/token'), JSON.stringify({ ...good, password: 12345 }), 'application/json');
    assertOAuth(numeric, 400, 'invalid_request', 'Missing required parameter: password');
  });

  test('a body that is not an object is invalid_request in OAuth shape', async () => {
    for (const [body, type] of [
      ['[1,2]', 'application/json'],
      ['"text"', 'application/json'],
      ['{"client_id":', 'application/json'],
      ['client_id=runtime-admin', 'text/plain'],
      ['', undefined],
    ] as const) {
      const res = await post(server.at('auth/token'), body, type);
      assert.equal(res.status, 400, `${type} ${body}: ${res.text}`);
      const b = res.body as Record<string, unknown>;
      assert.equal(b.error, 'invalid_request', `${type} ${body}`);
      assert.equal(typeof b.error_description, 'string');
      assert.deepEqual(Object.keys(b).sort(), ['error', 'error_description']);
    }
  });

  test('bad password and unknown user give the same invalid_grant', async () => {
    const wrong = await token(server, { ...good, username: 'reader', password: 'nope' });
    const unknown = await token(server, { ...good, username: 'nobody', password: 'nope' });
    assertOAuth(wrong, 400, 'invalid_grant', 'Invalid username or password');
    assertOAuth(unknown, 400, 'invalid_grant', 'Invalid username or password');
  });

  test('reader asking for * is invalid_scope', async () => {
    const res = await token(server, { ...good, username: 'reader', password: READER_PASSWORD, scope: '*' });
    assertOAuth(res, 400, 'invalid_scope', "The requested scope exceeds the user's permissions: *");
  });

  test('missing scope means the user permissions: the token reads settings', async () => {
    const { scope: _s, ...noScope } = good;
    const res = await token(server, { ...noScope, username: 'reader', password: READER_PASSWORD });
    assert.equal(res.status, 200, res.text);
    const t = (res.body as { access_token: string }).access_token;
    const settings = await request(server.at('settings'), { token: t });
    assert.equal(settings.status, 200, settings.text);
  });

  test('a narrowed scope is enforced: insufficient_scope', async () => {
    const t = await login(server, 'admin', ADMIN_PASSWORD, 'flows.read');
    const res = await request(server.at('settings'), { token: t });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { code: 'insufficient_scope', message: 'The access token lacks the permission "settings.read"' });
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="runnel", error="insufficient_scope", scope="settings.read"');
  });

  test('throttling: 429 with Retry-After for that address, another address still logs in', async () => {
    const wrong = { ...good, username: 'admin', password: 'wrong' };
    // Its own client address, so the lockout does not leak into the other tests.
    for (let i = 0; i < 3; i++) assert.equal((await token(server, wrong, '127.0.0.3')).status, 400);
    const refused = await token(server, good, '127.0.0.3');
    assert.equal(refused.status, 429, refused.text);
    const retry = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(retry) && retry > 0 && retry <= 60, `Retry-After ${refused.headers['retry-after']}`);
    assertOAuth(refused, 429, 'temporarily_unavailable', `Too many failed login attempts; retry in ${retry} seconds`);
    const elsewhere = await token(server, good, '127.0.0.2');
    assert.equal(elsewhere.status, 200, elsewhere.text);
  });

  test('revoke: needs a bearer token and a token parameter', async () => {
    const anon = await post(server.at('auth/revoke'), form({ token: 'x' }), FORM);
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.body, { code: 'unauthorized', message: 'Authentication required: send Authorization: Bearer <token>' });
    const t = await login(server);
    const missing = await post(server.at('auth/revoke'), form({}), FORM, undefined, t);
    assert.equal(missing.status, 400);
    assert.equal((missing.body as { code: string }).code, 'invalid_request');
  });

  test('revoke own token: 200 empty, then the token is invalid', async () => {
    const t = await login(server, 'reader', READER_PASSWORD, '');
    const res = await post(server.at('auth/revoke'), form({ token: t }), FORM, undefined, t);
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
    const after = await request(server.at('settings'), { token: t });
    assert.equal(after.status, 401);
    assert.deepEqual(after.body, { code: 'invalid_token', message: 'The access token is invalid, expired or revoked' });
    assert.equal(after.headers.get('www-authenticate'), 'Bearer realm="runnel", error="invalid_token"');
  });

  test("a reader revoking the admin's token has no effect; unknown tokens are ignored", async () => {
    const admin = await login(server);
    const reader = await login(server, 'reader', READER_PASSWORD, 'read');
    const res = await post(server.at('auth/revoke'), JSON.stringify({ token: admin }), 'application/json', undefined, reader);
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
    assert.equal((await request(server.at('settings'), { token: admin })).status, 200);
    const unknown = await post(server.at('auth/revoke'), form({ token: 'never-issued' }), FORM, undefined, reader);
    assert.equal(unknown.status, 200);
  });

  test('tokens are stored hashed only, and never logged', async () => {
    const t = await login(server);
    const sessions = await readFile(path.join(server.userDir, '.sessions.json'), 'utf8');
    assert.ok(sessions.includes(hashToken(t)));
    for (const name of await readdir(server.userDir, { recursive: true })) {
      const file = path.join(server.userDir, name);
      const content = await readFile(file, 'utf8').catch(() => '');
      assert.ok(!content.includes(t), `${name} holds a token in clear`);
    }
    const logs = server.logs.join('\n');
    assert.ok(!logs.includes(t));
    assert.ok(!logs.includes(ADMIN_PASSWORD));
    assert.ok(server.logs.some((l) => l.includes('"event":"auth.login"')));
  });
});

describe('sessions across restarts and expiry', () => {
  test('a token survives a restart over the same user dir', async () => {
    const first = await startServer({ adminAuth: adminAuth() });
    const t = await login(first);
    await first.stop();
    const second = await startServer({ adminAuth: adminAuth() }, first.userDir);
    try {
      assert.equal((await request(second.at('settings'), { token: t })).status, 200);
    } finally {
      await second.dispose();
    }
  });

  test('an expired token is invalid_token', async () => {
    const clock = fakeClock();
    const server = await startServer({ adminAuth: adminAuth({ sessionExpiryTime: 1 }) }, undefined, { clock });
    try {
      const res = await token(server, good);
      assert.equal((res.body as { expires_in: number }).expires_in, 1);
      const t = (res.body as { access_token: string }).access_token;
      assert.equal((await request(server.at('settings'), { token: t })).status, 200);
      clock.advance(1000);
      const expired = await request(server.at('settings'), { token: t });
      assert.equal(expired.status, 401);
      assert.equal((expired.body as { code: string }).code, 'invalid_token');
    } finally {
      await server.dispose();
    }
  });
});
