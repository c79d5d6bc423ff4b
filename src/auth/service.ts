import { availableParallelism } from 'node:os';
import type { Logger } from '../base/log.js';
import type { AdminAuthConfig, Settings, UserConfig } from '../settings/settings.js';
import { credentialUsers, ownerName, strategyUsers, type Account, type UserDirectory } from './directory.js';
import { createStrategyLogin, type StrategyLogin } from './strategy/login.js';
import { createOidcLogin, endSessionUrl, providerConfig } from './oidc/login.js';
import { logoutTokenChecker, type LoggedOut } from './oidc/logout.js';
import { oidcUsers, providerSessionStamp, subjectStamp } from './oidc/users.js';
import type { Storage } from '../storage/contract.js';
import type { AuthService, AutomationToken, Principal, SessionInfo, TokenGrant } from './types.js';
import { OAuthError } from './oauth-error.js';
import { createPasswordChecker, type PasswordChecker } from './passwords.js';
import { hasPermission, permissionList, resolveScope } from './permissions.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { RunnelError } from '../base/errors.js';
import { systemClock, type Clock } from '../base/clock.js';
import type { SessionRecord } from '../storage/contract.js';
import { clientOf, LoginThrottle, normaliseAddress } from './throttle.js';
import { hashToken, TokenStore } from './tokens.js';
import { WorkQueue } from './queue.js';
import { LoginAbandoned, LoginGate } from './login-gate.js';
import { KnownAddresses } from './known-addresses.js';

export { OAuthError } from './oauth-error.js';

const PRUNE_INTERVAL_MS = 60_000;
/** Logins from one address in progress at once; beyond it that address (only) gets 503. */
const MAX_LOGINS_PER_ADDRESS = 10;
/** A known address's rank at the login gate: below any count of failures, so it goes first. */
const KNOWN_RANK = -1;
/** Tokens we issue are 43 characters; anything far longer is not worth hashing. */
const MAX_TOKEN_LENGTH = 512;

export interface AuthDeps {
  settings: Settings;
  storage: Storage;
  log: Logger;
  /** Session expiry, login throttling and its delays read and wait on it; tests move a fake one instead of sleeping. */
  clock?: Clock;
  /**
   * How the served editor takes a strategy login: Node-RED 5's exchanges a one-time `?code=` at
   * POST /auth/token (the default), Node-RED 4's reads `?access_token=` from the URL.
   */
  editorLogin?: EditorLogin;
}

export type EditorLogin = 'code' | 'access_token';

/** The client of a pending exchange code's record: never a bearer token, only exchanged once. */
const EXCHANGE_CLIENT = 'exchange-code';

/** Builds the auth service; with `adminAuth` unset the admin API is open and `enabled` is false. */
export async function createAuthService(deps: AuthDeps): Promise<AuthService> {
  const config = deps.settings.adminAuth;
  if (!config) return disabledAuth;
  const log = deps.log;
  const clock = deps.clock ?? systemClock;
  const tokens = await TokenStore.open(deps.storage, log, {
    lifetime: config.sessionExpiryTime,
    maxSessions: config.maxSessions,
    now: clock.now,
    onEvict: (s) => log.audit({ event: 'auth.session.evicted', username: s.username, client: s.client, maxSessions: config.maxSessions }, 'oldest session expired: adminAuth.maxSessions reached'),
  });
  let directory: UserDirectory;
  let checker: PasswordChecker | undefined;
  if (config.type !== 'strategy') {
    // Beside an OIDC login, local users are emergency accounts; none configured: no password grant.
    if (config.users.length > 0) checker = await createPasswordChecker(config.users);
    const users = config.type === 'oidc' ? oidcUsers(config.users) : credentialUsers(config.users);
    directory = users;
    // Sessions and automation tokens of removed users, or from before a password change, end here
    // rather than lingering.
    const ended = await tokens.retain((s) => users.ownerNow(s) !== undefined);
    for (const s of ended) {
      const reason = users.has(ownerName(s)) ? 'password_changed' : 'user_removed';
      if (s.automation) log.audit({ event: 'auth.token.ended', id: s.automation.id, name: s.automation.name, createdBy: s.automation.createdBy, reason }, 'automation token ended at start');
      else log.audit({ event: 'auth.session.ended', username: s.username, client: s.client, reason }, 'session ended at start');
    }
  } else {
    directory = strategyUsers(config.users, log);
  }
  // Waiting logins hold their connections: they may take a quarter of the connection cap, so a
  // login storm leaves room for the admin's authenticated requests and the flows' routes.
  const loginCapacity = Math.max(1, Math.floor(deps.settings.httpServerLimits.maxConnections / 4));
  const auth = new CredentialsAuth(config, new LoginThrottle(deps.storage.loginFailures, { ...deps.settings.loginThrottle, now: clock.now }), log, directory, checker, tokens, loginCapacity, clock);
  const login = { cookie: deps.settings.httpAdminCookieOptions, cookieKey: config.type === 'credentials' ? undefined : await loginSessionKey(deps.storage), adminRoot: deps.settings.httpAdminRoot, log };
  const handOver = (user: Account, who: Record<string, unknown>) => auth.handOver(user, deps.editorLogin ?? 'code', who);
  if (config.type === 'strategy') {
    const find = (directory as ReturnType<typeof strategyUsers>).find;
    auth.strategy = createStrategyLogin({ ...login, cookieKey: login.cookieKey!, config, findUser: find, handOver });
  } else if (config.type === 'oidc') {
    const provider = providerConfig(config.oidc);
    auth.strategy = createOidcLogin({ ...login, cookieKey: login.cookieKey!, settings: config.oidc, handOver }, provider);
    auth.logoutToken = logoutTokenChecker(config.oidc, provider);
    auth.logoutRedirect = () => endSessionUrl(provider, config.oidc.clientId);
  }
  const unsubscribe = deps.storage.shared?.onChange((change) => {
    if (change.kind === 'sessions' || change.kind === 'resync') auth.reloadSessions();
  });
  if (unsubscribe) auth.onClose(unsubscribe);
  return auth;
}

/** Where the key that signs strategy logins' session cookies is kept: the runtime config every instance shares. */
const LOGIN_SESSION_KEY = '_loginSessionKey';

/**
 * The key signing the login session cookie, generated once and kept in the runtime config: a
 * login started on one instance of a cluster completes on another, and survives a restart.
 */
async function loginSessionKey(storage: Storage): Promise<Buffer> {
  const stored = (await storage.getRuntimeConfig())[LOGIN_SESSION_KEY];
  if (typeof stored === 'string' && stored.length >= 43) return Buffer.from(stored, 'base64url');
  const generated = randomBytes(32).toString('base64url');
  // Set only if still absent: another instance sharing the storage may have made one meanwhile.
  const kept = await storage.updateRuntimeConfig((c) => (typeof c[LOGIN_SESSION_KEY] === 'string' && (c[LOGIN_SESSION_KEY] as string).length >= 43 ? c : { ...c, [LOGIN_SESSION_KEY]: generated }));
  return Buffer.from(kept[LOGIN_SESSION_KEY] as string, 'base64url');
}

const authOff = () => new RunnelError('not_found', 'Admin authentication is not enabled');

const disabledAuth: AuthService = {
  enabled: false,
  authenticate: async () => null,
  login: async () => {
    throw new OAuthError(404, 'not_found', 'Admin authentication is not enabled');
  },
  exchange: async () => {
    throw new OAuthError(404, 'not_found', 'Admin authentication is not enabled');
  },
  revoke: async () => undefined,
  sessions: () => [],
  revokeUser: async () => 0,
  backchannelLogout: async () => {
    throw new OAuthError(404, 'not_found', 'Admin authentication is not enabled');
  },
  createAutomationToken: async () => {
    throw authOff();
  },
  listAutomationTokens: () => {
    throw authOff();
  },
  revokeAutomationToken: async () => {
    throw authOff();
  },
  close: async () => undefined,
};

/**
 * What a token may do now: its scope, narrowed to the user's current permissions. A `*` token
 * of a user since demoted to `read` can read; one whose user lost everything can do nothing.
 */
function effectiveScope(tokenScope: readonly string[], permissions: string | readonly string[]): string[] {
  const own = permissionList(permissions);
  const kept = tokenScope.filter((s) => hasPermission(own, s));
  for (const p of own) if (!kept.includes(p) && hasPermission(tokenScope, p)) kept.push(p);
  return kept;
}

class CredentialsAuth implements AuthService {
  readonly enabled = true;
  readonly anonymousScope: string[] | undefined;
  strategy: StrategyLogin | undefined;
  /** With `adminAuth.type: "oidc"`: checks a back-channel logout token, resolving with its subject. */
  logoutToken: ((token: string) => Promise<LoggedOut>) | undefined;
  logoutRedirect: (() => Promise<string | undefined>) | undefined;
  // One slot stays free for file I/O, which shares the libuv pool with bcrypt.
  // bcrypt is pure CPU: leave one core to the event loop (and one pool thread to file I/O), so a login
  // storm cannot make the rest of the API or the flows' http-in routes sluggish.
  private readonly bcryptQueue: WorkQueue;
  private readonly gate: LoginGate;
  private readonly known = new KnownAddresses();
  private readonly timer: NodeJS.Timeout;
  private loginsInProgress = 0;
  /** Logins in progress beyond which an address that failed lately is refused. */
  private readonly failingCapacity: number;
  private readonly loginsFrom = new Map<string, number>();
  private readonly closers: Array<() => void> = [];
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;

  constructor(
    private readonly config: AdminAuthConfig,
    private readonly throttle: LoginThrottle,
    private readonly log: Logger,
    private readonly directory: UserDirectory,
    /** Undefined when a strategy logs users in: no passwords then. */
    private readonly checker: PasswordChecker | undefined,
    private readonly tokens: TokenStore,
    private readonly loginCapacity: number,
    private readonly clock: Clock,
  ) {
    this.bcryptQueue = new WorkQueue(Math.max(1, Math.min((Number(process.env.UV_THREADPOOL_SIZE) || 4) - 1, availableParallelism() - 1)), loginCapacity);
    this.failingCapacity = Math.ceil((loginCapacity * 3) / 4);
    this.gate = new LoginGate((username) => throttle.userDelay(username), clock.sleep);
    this.anonymousScope = config.default && permissionList(config.default.permissions);
    this.timer = setInterval(() => this.prune(), PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  async authenticate(token: string): Promise<Principal | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
    const session = this.tokens.get(token) ?? (await this.tokens.fetch(token).catch(() => undefined));
    if (!session) return this.external(token);
    if (session.client === EXCHANGE_CLIENT) return null;
    // Removing a user ends their sessions and tokens, a password change those from before it; the
    // scope is narrowed to what the user may do now.
    const user = await this.directory.ownerOf(session);
    if (!user) return null;
    if (session.automation) {
      const { id, name } = session.automation;
      this.log.audit({ event: 'auth.token.use', id, name }, 'automation token used');
    }
    return { username: session.username, scope: effectiveScope(session.scope, user.permissions), tokenHash: session.tokenHash };
  }

  /** Node-RED's adminAuth.tokens: the settings' own function vouches for tokens Runnel did not issue. */
  private async external(token: string): Promise<Principal | null> {
    if (!this.config.tokens) return null;
    let user;
    try {
      user = await this.config.tokens(token);
    } catch (e) {
      this.log.error({ err: e }, 'adminAuth.tokens threw; the token is refused');
      return null;
    }
    if (!user || typeof user.username !== 'string' || user.permissions === undefined) return null;
    return { username: user.username, scope: permissionList(user.permissions), tokenHash: hashToken(token) };
  }

  async createAutomationToken(creator: Principal, req: { name: string; scope: string[]; expiresIn?: number; reqId?: string }): Promise<{ token: string; info: AutomationToken }> {
    // A token follows the configured user behind it; a caller vouched for by adminAuth.tokens or
    // adminAuth.default has no such user to follow.
    const maker = this.tokens.getByHash(creator.tokenHash);
    const user = maker && (await this.directory.ownerOf(maker));
    if (!maker || !user) throw new RunnelError('forbidden', 'Automation tokens are made by a user of adminAuth.users, or with their tokens');
    const beyond = req.scope.filter((s) => !hasPermission(creator.scope, s));
    if (beyond.length > 0) throw new RunnelError('forbidden', `A token cannot have permissions its creator lacks: ${beyond.join(' ')}`);
    const now = this.clock.now();
    const wanted = req.expiresIn === undefined ? undefined : now + req.expiresIn * 1000;
    // A login session makes tokens that outlive it (that is their use); a token's tokens do not outlive it.
    const limit = maker.automation && maker.expires !== Number.MAX_SAFE_INTEGER ? maker.expires : undefined;
    if (limit !== undefined && wanted !== undefined && wanted > limit) {
      throw new RunnelError('forbidden', `A token cannot outlive the token that makes it: expiresIn may be at most ${Math.floor((limit - now) / 1000)} seconds`);
    }
    const via = maker.automation && [...(maker.automation.via ?? []), { id: maker.automation.id, name: maker.automation.name }];
    const info = { id: randomUUID(), name: req.name, created: now, createdBy: user.username, ...(via ? { via } : {}) };
    const expires = wanted ?? limit;
    // The token ends with what ends its maker: the same password stamp, or the same provider subject.
    const { token, record } = await this.tokens.create(`token:${req.name}`, 'automation', req.scope, { info, ...(expires === undefined ? {} : { expires }) }, { stamp: maker.stamp ?? this.directory.stamp(user) });
    this.log.audit({ event: 'auth.token.create', id: info.id, name: info.name, scope: req.scope, username: creator.username, createdBy: user.username, reqId: req.reqId }, 'automation token created');
    return { token, info: describeToken(record) };
  }

  listAutomationTokens(): AutomationToken[] {
    return this.tokens.automationTokens().map(describeToken);
  }

  async revokeAutomationToken(caller: Principal, id: string, reqId?: string): Promise<boolean> {
    const all = this.tokens.automationTokens();
    const record = all.find((s) => s.automation!.id === id);
    if (!record) return false;
    if (!this.actsFor(caller, record)) throw new RunnelError('forbidden', 'Only the user a token acts for, or a caller with the * permission, may revoke it');
    // Tokens made with it go too: they may not outlive it.
    const made = all.filter((s) => s.automation!.via?.some((v) => v.id === id));
    for (const s of [record, ...made]) await this.tokens.remove(s.tokenHash);
    this.log.audit({ event: 'auth.token.revoke', id, name: record.automation!.name, username: caller.username, ...(made.length > 0 ? { alsoRevoked: made.map((s) => s.automation!.id) } : {}), reqId }, 'automation token revoked');
    return true;
  }

  /** Whether `caller` may end `target`: it is the caller's own, acts for the same user, or the caller has `*`. */
  private actsFor(caller: Principal, target: SessionRecord): boolean {
    if (caller.tokenHash === target.tokenHash || caller.scope.includes('*')) return true;
    const own = this.tokens.getByHash(caller.tokenHash);
    return own !== undefined && ownerName(own) === ownerName(target);
  }

  async login(raw: { username: string; password: string; scope: string | undefined; client: string; ip: string; reqId?: string; signal?: AbortSignal }): Promise<TokenGrant> {
    // As Node-RED: with a strategy, users log in at their identity provider only.
    if (!this.checker) throw new OAuthError(400, 'unsupported_grant_type', 'adminAuth logs users in through its strategy: open auth/strategy in a browser');
    const req = { ...raw, ip: normaliseAddress(raw.ip) };
    const who = { username: req.username.slice(0, 256), ip: req.ip, client: req.client, reqId: req.reqId };
    // Sessions are stored, so their addresses stay known across restarts (and cluster instances).
    const known = this.known.has(req.username, req.ip) || this.tokens.loggedInFrom(req.username, req.ip);
    const user = await this.admitted(req.ip, known, () => this.check(req, known, who));
    await this.throttle.succeeded(req.ip, req.username);
    this.known.remember(user.username, req.ip);
    let scope: string[];
    try {
      scope = resolveScope(req.scope, user.permissions);
    } catch (e) {
      this.log.audit({ event: 'auth.login.fail', reason: 'scope', scope: req.scope, ...who }, 'login failed: scope not permitted');
      throw e;
    }
    const { token } = await this.tokens.create(user.username, req.client, scope, undefined, { stamp: this.directory.stamp(user), address: req.ip });
    this.log.audit({ event: 'auth.login', scope, ...who }, 'login succeeded');
    return { accessToken: token, expiresIn: this.config.sessionExpiryTime };
  }

  /**
   * Hands a user the strategy's provider vouched for to the editor, with all their permissions (as
   * Node-RED): a session token for the URL (`access_token`), or a one-time code the editor exchanges
   * within `exchangeCodeExpiryTime` (`code`), so no session token is ever put in a URL. With shared
   * storage the code is a record of the shared sessions, so any instance of a cluster can exchange it.
   */
  async handOver(user: Account, editorLogin: EditorLogin, who: Record<string, unknown>): Promise<{ param: EditorLogin; value: string }> {
    const scope = permissionList(user.permissions);
    const client = editorLogin === 'code' ? EXCHANGE_CLIENT : 'node-red-editor';
    const lifetime = editorLogin === 'code' ? this.config.exchangeCodeExpiryTime : this.config.sessionExpiryTime;
    // A code lives seconds: unless another instance may exchange it, it need not wait for a write.
    const { token } = await this.tokens.create(user.username, client, scope, undefined, { stamp: this.directory.stamp(user), providerSession: user.providerSession }, { lifetime, fleeting: editorLogin === 'code' });
    this.log.audit({ event: 'auth.login', scope, username: user.username, client: 'node-red-editor', handOver: editorLogin, ...who }, 'login succeeded');
    return { param: editorLogin, value: token };
  }

  async exchange(req: { code: string; ip: string; reqId?: string }): Promise<TokenGrant> {
    const who = { ip: normaliseAddress(req.ip), reqId: req.reqId };
    const pending = req.code.length <= MAX_TOKEN_LENGTH ? await this.tokens.take(req.code, EXCHANGE_CLIENT) : undefined;
    const user = pending && (await this.directory.ownerOf(pending));
    if (!pending || !user) {
      this.log.audit({ event: 'auth.exchange.fail', ...who }, 'code exchange refused: unknown, expired or already used code');
      throw new OAuthError(400, 'invalid_grant', 'Invalid exchange code: unknown, expired or already used');
    }
    const scope = effectiveScope(pending.scope, user.permissions);
    const { token } = await this.tokens.create(pending.username, 'node-red-editor', scope, undefined, { stamp: pending.stamp, providerSession: pending.providerSession });
    this.log.audit({ event: 'auth.exchange', username: pending.username, ...who }, 'login code exchanged for a session');
    return { accessToken: token, expiresIn: this.config.sessionExpiryTime };
  }

  /**
   * Runs a login within the bounds on logins in progress: in all (they hold connections) and per
   * address (one client cannot take every place, nor make another wait behind its attempts). A
   * login from an address the user has logged in from before is bounded only per address, so a
   * storm from elsewhere cannot refuse the owner; addresses that have failed lately get three
   * quarters of the places, and when all are taken a login from an address with no failure takes
   * the place of one of theirs still waiting, so their storm leaves room for the owner on an
   * address never used.
   */
  private async admitted<T>(ip: string, known: boolean, fn: () => Promise<T>): Promise<T> {
    const client = clientOf(ip);
    // A login already in progress from the address is counted as a failure until it succeeds.
    const failing = !known && this.loginsInProgress >= this.failingCapacity && ((this.loginsFrom.get(client) ?? 0) > 0 || (await this.throttle.failuresOf(ip)) > 0);
    const mine = this.loginsFrom.get(client) ?? 0;
    if (!known && (this.loginsInProgress >= this.loginCapacity || (failing && this.loginsInProgress >= this.failingCapacity))) {
      const busy = () => new OAuthError(503, 'temporarily_unavailable', 'Too many logins in progress; retry shortly', 1);
      // A login from a clean address takes the place of one waiting from an address that failed.
      if (failing || !(this.gate.shed(busy(), KNOWN_RANK) || this.bcryptQueue.shed(busy()))) throw busy();
    }
    if (mine >= MAX_LOGINS_PER_ADDRESS) throw new OAuthError(503, 'temporarily_unavailable', 'Too many logins from this address in progress; retry shortly', 1);
    this.loginsInProgress++;
    this.loginsFrom.set(client, mine + 1);
    try {
      return await fn();
    } finally {
      this.loginsInProgress--;
      const left = (this.loginsFrom.get(client) ?? 1) - 1;
      if (left === 0) this.loginsFrom.delete(client);
      else this.loginsFrom.set(client, left);
    }
  }

  /**
   * The attempt counts against its budgets before it waits for anything (atomically, across a
   * cluster too), so attempts in flight together cannot outrun the limits and an attacker's queued
   * attempts already weigh on the user's delay. An attempt from an address with no failure in the
   * window is checked at once: the owner on a new phone or in a new office never waits behind
   * guesses from elsewhere, and an attacker gets one such guess per address (its next ones are not
   * clean). The others, for a user under attack, wait their turn at the gate (ahead of every other
   * address when their own is known to the user). Clean and known attempts also go first for a
   * bcrypt slot; a client that went away meanwhile checks nothing.
   */
  private async check(req: { username: string; password: string; ip: string; signal?: AbortSignal }, known: boolean, who: Record<string, unknown>): Promise<UserConfig> {
    const { wait, clean } = await this.throttle.attempt(req.ip, req.username);
    if (wait > 0) {
      this.log.audit({ event: 'auth.login.fail', reason: 'throttled', ...who }, 'login refused: too many failures');
      throw new OAuthError(429, 'temporarily_unavailable', `Too many failed login attempts; retry in ${wait} seconds`, wait);
    }
    if (!clean) await this.gate.enter(req.username, () => (known ? Promise.resolve(KNOWN_RANK) : this.throttle.failuresOf(req.ip)), req.signal);
    const checker = this.checker;
    const user = await this.bcryptQueue.run(async () => {
      if (req.signal?.aborted) throw new LoginAbandoned();
      return checker ? checker.check(req.username, req.password) : null;
    }, clean || known);
    if (!user) {
      this.log.audit({ event: 'auth.login.fail', reason: 'credentials', ...who }, 'login failed: bad username or password');
      throw new OAuthError(400, 'invalid_grant', 'Invalid username or password');
    }
    return user;
  }

  async revoke(caller: Principal, token: string, reqId?: string): Promise<void> {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return;
    const tokenHash = hashToken(token);
    const session = this.tokens.getByHash(tokenHash);
    const who = { event: 'auth.revoke', username: caller.username, reqId };
    if (!session) {
      this.log.audit({ ...who, outcome: 'unknown_token' }, 'revoke ignored: unknown or expired token');
      return;
    }
    if (!this.actsFor(caller, session)) {
      this.log.audit({ ...who, owner: session.username, outcome: 'not_owner' }, 'revoke ignored: token belongs to another user');
      return;
    }
    await this.tokens.remove(tokenHash);
    this.log.audit({ ...who, owner: session.username, outcome: 'revoked', self: tokenHash === caller.tokenHash }, 'token revoked');
  }

  /**
   * A logout token naming the user (`sub`) ends all their sessions and tokens; one naming only a
   * provider session (`sid`) ends exactly the login sessions made from it (automation tokens made
   * with them outlive login sessions, as they do a Runnel logout). One naming nothing known ends nothing.
   */
  async backchannelLogout(token: string, reqId?: string): Promise<number> {
    let named: LoggedOut;
    try {
      if (!this.logoutToken) throw new Error('adminAuth.type is not "oidc"');
      named = await this.logoutToken(token);
    } catch (e) {
      this.log.audit({ event: 'auth.logout.backchannel.fail', error: (e as Error).message, reqId }, 'back-channel logout refused');
      throw new OAuthError(400, 'invalid_request', `Invalid logout token: ${(e as Error).message}`);
    }
    const stamp = named.subject === undefined ? undefined : subjectStamp(named.subject);
    const session = named.session === undefined ? undefined : providerSessionStamp(named.session);
    const ends = (s: SessionRecord) => (stamp === undefined ? s.providerSession === session : s.stamp === stamp);
    await this.freshSessions();
    const ended = await this.tokens.retain((s) => !ends(s));
    this.log.audit({ event: 'auth.logout.backchannel', by: named.subject !== undefined ? 'sub' : 'sid', count: ended.length, usernames: [...new Set(ended.map(ownerName))], reqId }, 'the identity provider ended a user\'s sessions');
    return ended.length;
  }

  sessions(): SessionInfo[] {
    return this.tokens.list().filter((s) => s.client !== EXCHANGE_CLIENT).map((s) => ({ id: s.tokenHash.slice(0, 16), username: s.username, client: s.client, scope: [...s.scope], expires: new Date(s.expires).toISOString() }));
  }

  /** Ends the user's sessions and the automation tokens acting for them: a token may not outlive its user's revocation. */
  async revokeUser(caller: Principal, username: string, reqId?: string): Promise<number> {
    await this.freshSessions();
    const ended = await this.tokens.retain((s) => ownerName(s) !== username);
    const tokens = ended.filter((s) => s.automation !== undefined).map((s) => s.automation!.id);
    this.log.audit({ event: 'auth.revoke.user', username: caller.username, owner: username.slice(0, 256), count: ended.length, ...(tokens.length > 0 ? { tokens } : {}), reqId }, 'sessions and automation tokens of a user revoked');
    return ended.length;
  }

  /** Re-reads the shared sessions; calls during a reload share one more reload after it. */
  reloadSessions(): void {
    if (this.reloading) {
      this.reloadAgain = true;
      return;
    }
    this.reloading = this.tokens.reload().then(
      () => undefined,
      (err: unknown) => this.log.warn({ err: (err as Error).message }, 'reloading the shared sessions failed'),
    ).then(() => {
      this.reloading = undefined;
      if (this.reloadAgain) {
        this.reloadAgain = false;
        this.reloadSessions();
      }
    });
  }

  /**
   * Waits for a reload of the shared sessions begun after this call, so an ending (a logout, a
   * revocation) also reaches sessions another instance made moments ago.
   */
  private async freshSessions(): Promise<void> {
    this.reloadSessions();
    while (this.reloading) await this.reloading;
  }

  onClose(closer: () => void): void {
    this.closers.push(closer);
  }

  async close(): Promise<void> {
    for (const closer of this.closers) closer();
    await this.reloading;
    clearInterval(this.timer);
    await this.tokens.flush();
  }

  private prune(): void {
    this.throttle.prune().catch((e: unknown) => this.log.warn({ err: (e as Error).message }, 'pruning login failures failed'));
    this.tokens.prune().catch((e: unknown) => this.log.error({ err: e }, 'pruning expired sessions failed'));
  }
}

function describeToken(record: SessionRecord): AutomationToken {
  const { id, name, created, createdBy, via } = record.automation!;
  return { id, name, scope: [...record.scope], created, ...(record.expires === Number.MAX_SAFE_INTEGER ? {} : { expires: record.expires }), createdBy, ...(via ? { via: via.map((v) => ({ ...v })) } : {}) };
}
