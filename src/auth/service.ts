import { availableParallelism } from 'node:os';
import type { Logger } from '../log.js';
import type { AdminAuthConfig, Settings, UserConfig } from '../settings.js';
import type { Storage } from '../storage/types.js';
import type { AuthService, AutomationToken, Principal, TokenGrant } from './types.js';
import { OAuthError } from './oauth-error.js';
import { createPasswordChecker, type PasswordChecker } from './passwords.js';
import { hasPermission, permissionList, resolveScope } from './permissions.js';
import { randomUUID } from 'node:crypto';
import { RunnelError } from '../errors.js';
import type { SessionRecord } from '../storage/types.js';
import { LoginThrottle } from './throttle.js';
import { hashToken, TokenStore } from './tokens.js';
import { WorkQueue } from './queue.js';

export { OAuthError } from './oauth-error.js';

const MAX_SESSIONS_PER_USER = 100;
const PRUNE_INTERVAL_MS = 60_000;
/** Logins waiting for a bcrypt slot before new ones get 503. */
const MAX_QUEUED_LOGINS = 1000;
/** Tokens we issue are 43 characters; anything far longer is not worth hashing. */
const MAX_TOKEN_LENGTH = 512;

export interface AuthDeps {
  settings: Settings;
  storage: Storage;
  log: Logger;
}

/** Builds the auth service; with `adminAuth` unset the admin API is open and `enabled` is false. */
export async function createAuthService(deps: AuthDeps): Promise<AuthService> {
  const config = deps.settings.adminAuth;
  if (!config) return disabledAuth;
  const checker = await createPasswordChecker(config.users);
  const tokens = await TokenStore.open(deps.storage, deps.log, {
    lifetime: config.sessionExpiryTime,
    maxPerUser: MAX_SESSIONS_PER_USER,
  });
  const auth = new CredentialsAuth(config, deps.settings.loginThrottle, deps.log, checker, tokens);
  const unsubscribe = deps.storage.shared?.onChange((change) => {
    if (change.kind === 'sessions' || change.kind === 'resync') auth.reloadSessions();
  });
  if (unsubscribe) auth.onClose(unsubscribe);
  return auth;
}

const authOff = () => new RunnelError('not_found', 'Admin authentication is not enabled');

const disabledAuth: AuthService = {
  enabled: false,
  authenticate: async () => null,
  login: async () => {
    throw new OAuthError(404, 'not_found', 'Admin authentication is not enabled');
  },
  revoke: async () => undefined,
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

type Attempt = { throttled: number } | { user: UserConfig | null };

class CredentialsAuth implements AuthService {
  readonly enabled = true;
  readonly anonymousScope: string[] | undefined;
  private readonly users: Map<string, UserConfig>;
  private readonly throttle: LoginThrottle;
  // One slot stays free for file I/O, which shares the libuv pool with bcrypt.
  // bcrypt is pure CPU: leave one core to the event loop (and one pool thread to file I/O), so a login
  // storm cannot make the rest of the API or the flows' http-in routes sluggish.
  private readonly bcryptQueue = new WorkQueue(
    Math.max(1, Math.min((Number(process.env.UV_THREADPOOL_SIZE) || 4) - 1, availableParallelism() - 1)),
    MAX_QUEUED_LOGINS,
  );
  private readonly timer: NodeJS.Timeout;
  private readonly closers: Array<() => void> = [];
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;

  constructor(
    private readonly config: AdminAuthConfig,
    throttle: Settings['loginThrottle'],
    private readonly log: Logger,
    private readonly checker: PasswordChecker,
    private readonly tokens: TokenStore,
  ) {
    this.users = new Map(config.users.map((u) => [u.username, u]));
    this.anonymousScope = config.default && permissionList(config.default.permissions);
    this.throttle = new LoginThrottle(throttle);
    this.timer = setInterval(() => this.prune(), PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  async authenticate(token: string): Promise<Principal | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
    const session = this.tokens.get(token) ?? (await this.tokens.fetch(token).catch(() => undefined));
    if (session?.automation) {
      const { id, name } = session.automation;
      this.log.audit({ event: 'auth.token.use', id, name }, 'automation token used');
      return { username: session.username, scope: [...session.scope], tokenHash: session.tokenHash };
    }
    // Removing a user from the settings ends their sessions; their scope stays frozen otherwise.
    if (session && this.users.has(session.username)) return { username: session.username, scope: [...session.scope], tokenHash: session.tokenHash };
    return session ? null : this.external(token);
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
    const beyond = req.scope.filter((s) => !hasPermission(creator.scope, s));
    if (beyond.length > 0) throw new RunnelError('forbidden', `A token cannot have permissions its creator lacks: ${beyond.join(' ')}`);
    const info = { id: randomUUID(), name: req.name, created: Date.now(), createdBy: creator.username };
    const { token, record } = await this.tokens.create(`token:${req.name}`, 'automation', req.scope, { info, lifetime: req.expiresIn });
    this.log.audit({ event: 'auth.token.create', id: info.id, name: info.name, scope: req.scope, username: creator.username, reqId: req.reqId }, 'automation token created');
    return { token, info: describeToken(record) };
  }

  listAutomationTokens(): AutomationToken[] {
    return this.tokens.automationTokens().map(describeToken);
  }

  async revokeAutomationToken(caller: Principal, id: string, reqId?: string): Promise<boolean> {
    const record = this.tokens.automationTokens().find((s) => s.automation!.id === id);
    if (!record) return false;
    await this.tokens.remove(record.tokenHash);
    this.log.audit({ event: 'auth.token.revoke', id, name: record.automation!.name, username: caller.username, reqId }, 'automation token revoked');
    return true;
  }

  async login(req: { username: string; password: string; scope: string | undefined; client: string; ip: string; reqId?: string }): Promise<TokenGrant> {
    const who = { username: req.username.slice(0, 256), ip: req.ip, client: req.client, reqId: req.reqId };
    const throttled = (wait: number) => {
      this.log.audit({ event: 'auth.login.fail', reason: 'throttled', ...who }, 'login refused: too many failures');
      return new OAuthError(429, 'temporarily_unavailable', `Too many failed login attempts; retry in ${wait} seconds`, wait);
    };
    const early = this.throttle.retryAfter(req.ip, req.username);
    if (early > 0) throw throttled(early);
    if (!this.bcryptQueue.hasRoom()) {
      throw new OAuthError(503, 'temporarily_unavailable', 'Too many logins in progress; retry shortly', 1);
    }
    // The throttle is checked again once a slot is free: failures that finished while this
    // attempt waited count, so a burst of parallel guesses cannot outrun the limit.
    const attempt = await this.bcryptQueue.run<Attempt>(async () => {
      const wait = this.throttle.retryAfter(req.ip, req.username);
      return wait > 0 ? { throttled: wait } : { user: await this.checker.check(req.username, req.password) };
    });
    if ('throttled' in attempt) throw throttled(attempt.throttled);
    const user = attempt.user;
    if (!user) {
      this.throttle.failed(req.ip, req.username);
      this.log.audit({ event: 'auth.login.fail', reason: 'credentials', ...who }, 'login failed: bad username or password');
      throw new OAuthError(400, 'invalid_grant', 'Invalid username or password');
    }
    this.throttle.succeeded(req.ip, req.username);
    let scope: string[];
    try {
      scope = resolveScope(req.scope, user.permissions);
    } catch (e) {
      this.log.audit({ event: 'auth.login.fail', reason: 'scope', scope: req.scope, ...who }, 'login failed: scope not permitted');
      throw e;
    }
    const { token } = await this.tokens.create(user.username, req.client, scope);
    this.log.audit({ event: 'auth.login', scope, ...who }, 'login succeeded');
    return { accessToken: token, expiresIn: this.config.sessionExpiryTime };
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
    if (session.username !== caller.username && !caller.scope.includes('*')) {
      this.log.audit({ ...who, owner: session.username, outcome: 'not_owner' }, 'revoke ignored: token belongs to another user');
      return;
    }
    await this.tokens.remove(tokenHash);
    this.log.audit({ ...who, owner: session.username, outcome: 'revoked', self: tokenHash === caller.tokenHash }, 'token revoked');
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
    this.throttle.prune();
    this.tokens.prune().catch((e: unknown) => this.log.error({ err: e }, 'pruning expired sessions failed'));
  }
}

function describeToken(record: SessionRecord): AutomationToken {
  const { id, name, created, createdBy } = record.automation!;
  return { id, name, scope: [...record.scope], created, ...(record.expires === Number.MAX_SAFE_INTEGER ? {} : { expires: record.expires }), createdBy };
}
