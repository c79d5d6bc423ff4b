/**
 * A failure of the token endpoint, rendered as RFC 6749 §5.2 `{error, error_description}`
 * rather than the admin API's `{code, message}`: OAuth clients parse the standard shape.
 */
export class OAuthError extends Error {
  readonly status: number;
  readonly error: string;
  readonly description: string;
  /** Seconds; sent as `Retry-After` with 429 and 503. */
  readonly retryAfter?: number;

  constructor(status: number, error: string, description: string, retryAfter?: number) {
    super(description);
    this.name = 'OAuthError';
    this.status = status;
    this.error = error;
    this.description = description;
    this.retryAfter = retryAfter;
  }
}

export function isOAuthError(e: unknown): e is OAuthError {
  return e instanceof OAuthError;
}
