import type { StrategyLogin } from './strategy/login.js';

/** Who made a request, once their bearer token was checked. */
export interface Principal {
  username: string;
  /** The token's scope: permission strings such as `*`, `read`, `flows.write`. */
  scope: string[];
  /** SHA-256 hex of the token used, so revocation can tell the caller's own tokens apart. */
  tokenHash: string;
  /** A request without a token, allowed by `adminAuth.default`. */
  anonymous?: true;
}

/** An automation token as listed: never its secret. */
export interface AutomationToken {
  id: string;
  name: string;
  scope: string[];
  /** Epoch milliseconds. */
  created: number;
  /** Epoch milliseconds; absent when it lives until revoked. */
  expires?: number;
  /** The user the token acts for: it never does more than they may do now. */
  createdBy: string;
  /** When made by automation tokens: that chain, starting with the one the user made. */
  via?: Array<{ id: string; name: string }>;
}

export interface TokenGrant {
  accessToken: string;
  expiresIn: number;
}

/** What the HTTP layer needs from authentication; auth off means `enabled === false`. */
export interface AuthService {
  readonly enabled: boolean;
  /** What a request without a token may do (`adminAuth.default`); undefined: nothing. */
  readonly anonymousScope?: string[];
  /** With `adminAuth.type: "oidc"`: the provider's logout page, where the editor goes after its own logout. */
  readonly logoutRedirect?: () => Promise<string | undefined>;
  /** With `adminAuth.type: "strategy"` (or `"oidc"`): the login through the identity provider. */
  readonly strategy?: StrategyLogin;
  /** Resolves a bearer token to its principal, or null when unknown, revoked or expired. */
  authenticate(token: string): Promise<Principal | null>;
  /**
   * The password grant. Throws OAuthError on failure. `ip` keys the throttling; `reqId` ties audit
   * lines to the request; `signal` aborts when the client goes away (its attempt is dropped).
   */
  login(req: { username: string; password: string; scope: string | undefined; client: string; ip: string; reqId?: string; signal?: AbortSignal }): Promise<TokenGrant>;
  /**
   * Node-RED 5's code exchange: the one-time code a strategy login handed the editor, for a session
   * token. Throws OAuthError invalid_grant for a code that is unknown, expired or already used.
   */
  exchange(req: { code: string; ip: string; reqId?: string }): Promise<TokenGrant>;
  /** Revokes `token` if it belongs to `caller` or the caller has `*`; silently ignores anything else (RFC 7009). */
  revoke(caller: Principal, token: string, reqId?: string): Promise<void>;
  /** Every live session, for an admin to see (GET /auth/sessions). */
  sessions(): SessionInfo[];
  /**
   * OpenID Connect back-channel logout: ends every session and token of the subject the provider's
   * signed logout token names; the count ended. Throws OAuthError invalid_request for a token that
   * does not check out.
   */
  backchannelLogout(logoutToken: string, reqId?: string): Promise<number>;
  /** Ends every session of `username` and every automation token acting for them (DELETE /auth/sessions/:user); the count ended. */
  revokeUser(caller: Principal, username: string, reqId?: string): Promise<number>;
  /**
   * Issues an automation token for CI/CD: scope within the creator's, optional lifetime in seconds;
   * one made with another automation token expires no later than it. The token is returned once;
   * only its hash is kept. Throws RunnelError forbidden / not_found.
   */
  createAutomationToken(creator: Principal, req: { name: string; scope: string[]; expiresIn?: number; reqId?: string }): Promise<{ token: string; info: AutomationToken }>;
  listAutomationTokens(): AutomationToken[];
  /**
   * Revokes an automation token, and the tokens made with it. False when no automation token has
   * that id; throws RunnelError forbidden unless the caller acts for the token's user or has `*`.
   */
  revokeAutomationToken(caller: Principal, id: string, reqId?: string): Promise<boolean>;
  /** Flushes sessions and stops timers. */
  close(): Promise<void>;
}

/** A session as an admin sees it: never the token or its hash, only a short id. */
export interface SessionInfo {
  id: string;
  username: string;
  client: string;
  scope: string[];
  /** ISO 8601. */
  expires: string;
}
