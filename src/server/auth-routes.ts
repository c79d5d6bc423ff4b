import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from './services.js';
import { describe } from './errors.js';
import { isRunnelError } from '../base/errors.js';
import { needsPermission } from '../auth/guard.js';
import { isOAuthError, OAuthError } from '../auth/oauth-error.js';
import type { StrategyLogin } from '../auth/strategy/login.js';
import type { Settings } from '../settings/settings.js';
import type { ThemeContext } from './editor/theme.js';

/** Our own client ids and Node-RED's, so the Node-RED editor and node-red-admin can log in. */
const CLIENTS = new Set(['runtime-admin', 'runtime-editor', 'node-red-admin', 'node-red-editor']);
/** Public clients: no secret, or Node-RED's placeholder. */
const NO_SECRET = 'not_available';

const loginSchemeSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    autoLogin: { type: 'boolean' },
    loginRedirect: { type: 'string' },
    image: { type: 'string' },
    loginMessage: { type: 'string' },
    prompts: {
      type: 'array',
      items: {
        type: 'object',
        // editorTheme.login.button may carry more (Node-RED passes it on whole).
        additionalProperties: true,
        properties: { id: { type: 'string' }, type: { type: 'string' }, label: { type: 'string' }, url: { type: 'string' }, icon: { type: 'string' } },
      },
    },
  },
};

const CREDENTIALS_SCHEME = {
  type: 'credentials',
  prompts: [
    { id: 'username', type: 'text', label: 'user.username' },
    { id: 'password', type: 'password', label: 'user.password' },
  ],
};

const tokenSchema = {
  type: 'object',
  required: ['access_token', 'expires_in', 'token_type'],
  // accessToken: Node-RED 5's editor reads the exchanged token by that name.
  properties: { access_token: { type: 'string' }, accessToken: { type: 'string' }, expires_in: { type: 'integer' }, token_type: { type: 'string' } },
};

const oauthErrorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
};

const revokeBodySchema = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1 } },
};

const authDisabled = () => new OAuthError(404, 'not_found', 'Admin authentication is not enabled');

/**
 * The OAuth 2.0 endpoints: GET /auth/login (which scheme to use), POST /auth/token (RFC 6749
 * password grant, or Node-RED 5's exchange of a strategy login's `code`) and POST /auth/revoke (RFC 7009). The token endpoint answers every failure,
 * body parse errors included, in the RFC 6749 §5.2 shape with RFC statuses (Node-RED uses
 * 401-text, 403, 500 and 501 here).
 */
export const authRoutes: FastifyPluginAsync<{ services: Services; themeLogin: ThemeContext['login'] }> = async (app, { services, themeLogin }) => {
  const { auth } = services;

  const scheme = auth.enabled ? loginScheme(auth.strategy ? strategyScheme(auth.strategy, services.settings) : CREDENTIALS_SCHEME, themeLogin) : {};
  const themeLogout = logoutRedirect(services.settings);
  app.get('/auth/login', { schema: { response: { 200: loginSchemeSchema } } }, async () => scheme);

  app.post(
    '/auth/token',
    {
      schema: { response: { 200: tokenSchema, '4xx': oauthErrorSchema, '5xx': oauthErrorSchema } },
      errorHandler: (error, request, reply) => sendOAuthError(reply, toOAuthError(error, request)),
    },
    async (request, reply) => {
      if (!auth.enabled) throw authDisabled();
      const code = exchangeCode(request.body);
      if (code !== undefined) {
        const grant = await auth.exchange({ code, ip: request.ip, reqId: request.id });
        void reply.header('Pragma', 'no-cache').header('Cache-Control', 'no-store');
        return { access_token: grant.accessToken, accessToken: grant.accessToken, expires_in: grant.expiresIn, token_type: 'Bearer' };
      }
      // A client that leaves while its login waits (throttled, or queued for bcrypt) drops it.
      const gone = new AbortController();
      const leave = () => {
        if (!reply.raw.writableEnded) gone.abort();
      };
      reply.raw.once('close', leave);
      let grant;
      try {
        grant = await auth.login({ ...tokenRequest(request.body, request.ip), reqId: request.id, signal: gone.signal });
      } finally {
        reply.raw.off('close', leave);
      }
      void reply.header('Pragma', 'no-cache').header('Cache-Control', 'no-store');
      return { access_token: grant.accessToken, expires_in: grant.expiresIn, token_type: 'Bearer' };
    },
  );

  app.post<{ Body: { token: string } }>(
    '/auth/revoke',
    {
      // Both run before body parsing and validation: a caller without a token learns nothing else.
      onRequest: [
        async (_request, reply) => {
          if (auth.enabled) return;
          sendOAuthError(reply, authDisabled());
          return reply;
        },
        needsPermission(auth, ''),
      ],
      schema: {
        body: revokeBodySchema,
        response: { 200: { type: 'object', properties: { redirect: { type: 'string' } }, description: 'Revoked, or ignored (RFC 7009); empty, or with `redirect` where the editor goes next (editorTheme.logout.redirect, or an OIDC provider\'s logout page)' } },
      },
    },
    async (request, reply) => {
      if (request.user) await auth.revoke(request.user, request.body.token, request.id);
      // Node-RED's editor follows `redirect` after its logout. A strategy user's way to log out at
      // their provider is Node-RED's editorTheme.logout.redirect; the OIDC login knows the
      // provider's own page (RP-initiated logout), which a redirect the settings name overrides.
      const redirect = themeLogout ?? (await auth.logoutRedirect?.());
      return redirect === undefined ? reply.code(200).send() : reply.code(200).send({ redirect });
    },
  );

  // OpenID Connect back-channel logout: the provider posts a signed logout token, server to server.
  if (services.settings.adminAuth?.type === 'oidc') {
    app.post<{ Body: { logout_token: string } }>(
      '/auth/backchannel-logout',
      {
        config: { crossSiteForm: true },
        schema: { body: { type: 'object', required: ['logout_token'], properties: { logout_token: { type: 'string', minLength: 1, maxLength: 16384 } } }, response: { 200: { type: 'null' }, '4xx': oauthErrorSchema } },
        errorHandler: (error, request, reply) => sendOAuthError(reply, toOAuthError(error, request)),
      },
      async (request, reply) => {
        await auth.backchannelLogout(request.body.logout_token, request.id);
        return reply.code(200).header('Cache-Control', 'no-store').send();
      },
    );
  }

  // An admin sees every live session and can end all of a user's (a lost laptop, a leaver).
  const sessionSchema = {
    type: 'object',
    properties: { id: { type: 'string' }, username: { type: 'string' }, client: { type: 'string' }, scope: { type: 'array', items: { type: 'string' } }, expires: { type: 'string' } },
  } as const;
  app.get(
    '/auth/sessions',
    { onRequest: needsPermission(auth, '*'), schema: { response: { 200: { type: 'object', properties: { sessions: { type: 'array', items: sessionSchema } } } } } },
    async () => ({ sessions: auth.sessions() }),
  );
  app.delete<{ Params: { user: string } }>(
    '/auth/sessions/:user',
    {
      onRequest: needsPermission(auth, '*'),
      schema: {
        params: { type: 'object', properties: { user: { type: 'string', minLength: 1, maxLength: 256 } }, required: ['user'] },
        response: { 200: { type: 'object', properties: { revoked: { type: 'integer' } } } },
      },
    },
    async (request) => ({ revoked: request.user ? await auth.revokeUser(request.user, request.params.user, request.id) : 0 }),
  );
};

/**
 * Node-RED's strategy scheme: one button to auth/strategy (`/<admin root>/auth/strategy` under
 * another root), `autoLogin` to go there at once.
 */
function strategyScheme(login: StrategyLogin, settings: Settings): Record<string, unknown> {
  const prefix = settings.httpAdminRoot === '/' ? '' : `${settings.httpAdminRoot}/`;
  const url = `${prefix}auth/strategy`;
  const prompts = [{ type: 'button', label: login.label, url, ...(login.icon ? { icon: login.icon } : {}) }];
  return { type: 'strategy', ...(login.autoLogin ? { autoLogin: true, loginRedirect: url } : {}), prompts };
}

/**
 * What the theme adds to either scheme, as Node-RED's: `editorTheme.login.image` and `.message`
 * shown in the login dialog, and `.button` replacing the prompts with one button.
 */
function loginScheme(scheme: Record<string, unknown>, login: ThemeContext['login']): Record<string, unknown> {
  const button = login?.button;
  return {
    ...scheme,
    ...(login?.image ? { image: login.image } : {}),
    ...(login?.message ? { loginMessage: login.message } : {}),
    ...(typeof button === 'object' && button !== null && !Array.isArray(button) ? { prompts: [{ type: 'button', ...button }] } : {}),
  };
}

/** Node-RED's `editorTheme.logout.redirect`, when the settings give one. */
function logoutRedirect(settings: Settings): string | undefined {
  const logout = settings.editorTheme.logout;
  const redirect = typeof logout === 'object' && logout !== null ? (logout as Record<string, unknown>).redirect : undefined;
  return typeof redirect === 'string' && redirect !== '' ? redirect : undefined;
}

type LoginRequest = Parameters<Services['auth']['login']>[0];

/**
 * The code of Node-RED 5's exchange (`code` alone, as its editor posts it, or with RFC 6749's
 * `grant_type=authorization_code`); undefined for any other token request. No client is named:
 * the editor sends none, and the code alone is the credential.
 */
function exchangeCode(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const fields = body as Record<string, unknown>;
  const grantType = Object.hasOwn(fields, 'grant_type') ? fields.grant_type : undefined;
  const code = Object.hasOwn(fields, 'code') ? fields.code : undefined;
  if (grantType === 'authorization_code' || (grantType === undefined && code !== undefined)) {
    if (typeof code !== 'string' || code === '') throw new OAuthError(400, 'invalid_request', 'Missing required parameter: code');
    return code;
  }
  return undefined;
}

/** Validates the token request in RFC 6749 order: client, grant type, then the grant's parameters. */
function tokenRequest(body: unknown, ip: string): LoginRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError(400, 'invalid_request', 'The request body must be form-urlencoded or a JSON object');
  }
  const field = (name: string): unknown => (Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined);
  const client = field('client_id');
  const secret = field('client_secret');
  const known = `${[...CLIENTS].join(', ')}, e.g. client_id=runtime-admin`;
  if (client === undefined || client === '') throw new OAuthError(401, 'invalid_client', `Missing client_id: send one of ${known}`);
  if (typeof client !== 'string' || !CLIENTS.has(client)) {
    throw new OAuthError(401, 'invalid_client', `Unknown client_id ${JSON.stringify(client).slice(0, 80)}: send one of ${known}`);
  }
  if (!(secret === undefined || secret === NO_SECRET)) {
    throw new OAuthError(401, 'invalid_client', `Wrong client_secret: these clients are public, send none (or ${NO_SECRET})`);
  }
  const grantType = field('grant_type');
  // A missing parameter is invalid_request (RFC 6749 §5.2); unsupported_grant_type is for a value we do not support.
  if (grantType === undefined || grantType === '') {
    throw new OAuthError(400, 'invalid_request', 'Missing required parameter: grant_type');
  }
  if (grantType !== 'password') {
    const shown = typeof grantType === 'string' ? grantType.slice(0, 64) : typeof grantType;
    throw new OAuthError(400, 'unsupported_grant_type', `Unsupported grant type: ${shown}`);
  }
  const required = (name: string): string => {
    const value = field(name);
    if (typeof value !== 'string' || value === '') {
      throw new OAuthError(400, 'invalid_request', `Missing required parameter: ${name}`);
    }
    return value;
  };
  const username = required('username');
  const password = required('password');
  const scope = field('scope');
  if (scope !== undefined && typeof scope !== 'string') {
    throw new OAuthError(400, 'invalid_request', 'Parameter scope must be a space-separated string');
  }
  return { username, password, scope, client, ip };
}

function toOAuthError(error: FastifyError | Error, request: FastifyRequest): OAuthError {
  if (isOAuthError(error)) return error;
  const { status, code, message } = describe(error);
  if (code === 'storage_unavailable') {
    const retryAfter = isRunnelError(error) && typeof error.details?.retryAfter === 'number' ? error.details.retryAfter : 5;
    return new OAuthError(503, 'temporarily_unavailable', message, retryAfter);
  }
  if (status >= 500) {
    request.log.error({ err: error, reqId: request.id }, 'unexpected error in the token endpoint');
    return new OAuthError(500, 'server_error', 'Internal error');
  }
  return new OAuthError(status, 'invalid_request', message);
}

function sendOAuthError(reply: FastifyReply, e: OAuthError): void {
  void reply.code(e.status).header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
  if (e.status === 401) void reply.header('WWW-Authenticate', 'Basic realm="runnel"');
  if (e.retryAfter !== undefined) void reply.header('Retry-After', String(e.retryAfter));
  // A busy server frees the connection too: a login storm must not hold the connection cap.
  if (e.status === 503) void reply.header('Connection', 'close');
  void reply.type('application/json').send({ error: e.error, error_description: e.description });
}
