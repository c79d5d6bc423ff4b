/** Who made a request, once their bearer token was checked. */
export interface Principal {
  username: string;
  /** The token's scope: permission strings such as `*`, `read`, `flows.write`. */
  scope: string[];
  /** SHA-256 hex of the token used, so revocation can tell the caller's own tokens apart. */
  tokenHash: string;
}

export interface TokenGrant {
  accessToken: string;
  expiresIn: number;
}

/** What the HTTP layer needs from authentication; auth off means `enabled === false`. */
export interface AuthService {
  readonly enabled: boolean;
  /** Resolves a bearer token to its principal, or null when unknown, revoked or expired. */
  authenticate(token: string): Promise<Principal | null>;
  /** The password grant. Throws OAuthError on failure. `ip` keys the throttling; `reqId` ties audit lines to the request. */
  login(req: { username: string; password: string; scope: string | undefined; client: string; ip: string; reqId?: string }): Promise<TokenGrant>;
  /** Revokes `token` if it belongs to `caller` or the caller has `*`; silently ignores anything else (RFC 7009). */
  revoke(caller: Principal, token: string, reqId?: string): Promise<void>;
  /** Every live session, for an admin to see (GET /auth/sessions). */
  sessions(): SessionInfo[];
  /** Ends every session of `username` (DELETE /auth/sessions/:user); the count ended. */
  revokeUser(caller: Principal, username: string, reqId?: string): Promise<number>;
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
