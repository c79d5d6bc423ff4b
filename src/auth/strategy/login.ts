import { AsyncLocalStorage } from 'node:async_hooks';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Logger } from '../../base/log.js';
import type { CookieOptions } from '../../settings/admin-strategy.js';
import type { StrategyAuthConfig } from '../../settings/settings.js';
import type { Account } from '../directory.js';
import { passportRequest, runStrategy, type Outcome } from './passport.js';
import { CookieSessions } from './session.js';
import { wrapVerify } from './verify.js';

/** Node-RED's passport.authenticate options for both strategy routes. */
const AUTHENTICATE_OPTIONS = Object.freeze({ session: false, failWithError: true, failureMessage: true });
/** A provider that takes longer than this to answer the token or userinfo request fails the login. */
const DEFAULT_TIMEOUT_MS = 30_000;
/** An error's text shown to the browser in ?session_message= is cut to this. */
const MAX_MESSAGE_CHARS = 200;

/** The parts of a request to GET /auth/strategy or its callback the login needs. */
export interface StrategyRequest {
  raw: IncomingMessage;
  /** The request's path and query as the client sent it. */
  url: string;
  /** `protocol://host[:port]` the client addressed. */
  origin: string;
  query: unknown;
  body: unknown;
  ip: string;
  reqId: string;
}

/** Always a redirect (to the provider, or back to the editor), and the session cookie to set. */
export interface StrategyReply {
  status: number;
  location: string;
  setCookie?: string;
}

/** Node-RED's `adminAuth.type: "strategy"` login: the prompt it offers and the requests that run it. */
export interface StrategyLogin {
  readonly label: string;
  readonly icon: string | undefined;
  readonly autoLogin: boolean;
  /** The callback's method: POST when `options.callbackMethod` says so (form_post providers). */
  readonly callbackMethod: 'GET' | 'POST';
  handle(req: StrategyRequest): Promise<StrategyReply>;
}

export interface StrategyLoginDeps {
  config: StrategyAuthConfig;
  cookie: CookieOptions;
  /** Signs the login session cookie; every instance of a cluster has the same. */
  cookieKey: Buffer;
  adminRoot: string;
  log: Logger;
  findUser(username: string): Promise<Account | undefined>;
  /** Starts the user's login: the query parameter the editor takes it from (`code` or `access_token`) and its value. */
  handOver(user: Account, who: Record<string, unknown>): Promise<{ param: string; value: string }>;
  timeoutMs?: number;
  now?: () => number;
}

type Who = { ip: string; reqId: string };

export function createStrategyLogin(deps: StrategyLoginDeps): StrategyLogin {
  const { config, log } = deps;
  const settings = config.strategy;
  const sessions = new CookieSessions(deps.cookie, deps.cookieKey, deps.now);
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const editor = deps.adminRoot === '/' ? '/' : `${deps.adminRoot}/`;
  // The verify callback runs deep inside the strategy; the request it belongs to travels with it.
  const current = new AsyncLocalStorage<Who>();
  // Only users our verify wrapper let in become sessions, whatever else a strategy passes to success().
  const vouched = new WeakSet<Account>();

  const complete = async (profile: unknown): Promise<Account | false> => {
    const username = typeof profile === 'string' ? profile : (profile as { username?: unknown } | null | undefined)?.username;
    const user = typeof username === 'string' && username !== '' ? await deps.findUser(username) : undefined;
    if (!user) {
      log.audit({ event: 'auth.login.fail.oauth', reason: 'user_refused', username: typeof username === 'string' ? username.slice(0, 256) : undefined, ...current.getStore() }, 'login refused: adminAuth.users does not know the user');
      return false;
    }
    const account = { username: user.username, permissions: user.permissions };
    vouched.add(account);
    return account;
  };
  const verify = settings.options.verify as ((...args: unknown[]) => unknown) | undefined;
  let strategy: object;
  try {
    strategy = new settings.strategy(settings.options, wrapVerify(verify, complete));
  } catch (e) {
    throw new Error(`adminAuth.strategy.strategy could not be set up with its options: ${(e as Error).message}`);
  }
  if (typeof (strategy as { authenticate?: unknown }).authenticate !== 'function') {
    throw new Error('adminAuth.strategy.strategy is not a Passport strategy: its instances have no authenticate(req, options)');
  }

  const failure = (message: string): string => `${editor}?session_message=${encodeURIComponent(message.slice(0, MAX_MESSAGE_CHARS))}`;

  const conclude = async (outcome: Outcome, who: Who): Promise<{ status: number; location: string }> => {
    switch (outcome.kind) {
      case 'redirect':
        return { status: outcome.status, location: outcome.url };
      case 'success': {
        const user = outcome.user as Account;
        if (typeof user === 'object' && user !== null && vouched.has(user)) {
          // The value is base64url: safe in a URL as it is.
          const { param, value } = await deps.handOver(user, { ...who, strategy: settings.name });
          return { status: 302, location: `${editor}?${param}=${value}` };
        }
        log.audit({ event: 'auth.login.fail.oauth', reason: 'not_verified', ...who }, 'login refused: the strategy succeeded without the verify callback');
        return { status: 302, location: failure(authenticationError(401)) };
      }
      case 'fail': {
        const message = authenticationError(outcome.status ?? 401);
        log.audit({ event: 'auth.login.fail.oauth', reason: challengeText(outcome.challenge) ?? message, ...who }, 'login failed');
        return { status: 302, location: failure(message) };
      }
      case 'pass':
        log.audit({ event: 'auth.login.fail.oauth', reason: 'passed', ...who }, 'login failed: the strategy passed the request on');
        return { status: 302, location: failure(authenticationError(401)) };
      case 'error': {
        const message = errorText(outcome.error);
        log.audit({ event: 'auth.login.fail.oauth', error: message, ...who }, 'login failed');
        return { status: 302, location: failure(message) };
      }
    }
  };

  return {
    label: settings.label,
    icon: settings.icon,
    autoLogin: settings.autoLogin,
    callbackMethod: typeof settings.options.callbackMethod === 'string' && /^post$/i.test(settings.options.callbackMethod) ? 'POST' : 'GET',
    async handle(req) {
      const who = { ip: req.ip, reqId: req.reqId };
      const { data, had } = sessions.read(req.raw.headers.cookie);
      const passportReq = passportRequest(req.raw, { url: req.url, query: req.query, body: req.body, session: data });
      const outcome = await current.run(who, () => runStrategy(strategy, passportReq, { ...AUTHENTICATE_OPTIONS }, timeoutMs));
      const reply = await conclude(outcome, who);
      // Strategies may replace req.session's content, not the object: read it back from the request.
      const setCookie = sessions.write(passportReq.session, had);
      return setCookie === undefined ? reply : { ...reply, setCookie };
    },
  };
}

/** passport's AuthenticationError as Node-RED shows it: `AuthenticationError: Unauthorized`. */
function authenticationError(status: number): string {
  return `AuthenticationError: ${STATUS_CODES[status] ?? STATUS_CODES[401]}`;
}

/** A strategy error's name and message (never its stack, nor the provider's raw answer). */
function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `Error: ${String(error)}`;
}

function challengeText(challenge: unknown): string | undefined {
  if (typeof challenge === 'string') return challenge.slice(0, MAX_MESSAGE_CHARS);
  const message = (challenge as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message.slice(0, MAX_MESSAGE_CHARS) : undefined;
}
