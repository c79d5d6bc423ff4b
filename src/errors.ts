/**
 * Typed errors. Every failure a client can cause carries a stable `code` and an HTTP status,
 * so routes never guess: the admin error handler turns a RunnelError into `{code, message}`.
 */
export class RunnelError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details?: Record<string, unknown>;

  constructor(code: string, message: string, status = 400, details?: Record<string, unknown>) {
    super(message);
    this.name = 'RunnelError';
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

export const badRequest = (code: string, message: string) => new RunnelError(code, message, 400);
export const notFound = (message = 'Not found', code = 'not_found') => new RunnelError(code, message, 404);
export const conflict = (code: string, message: string) => new RunnelError(code, message, 409);

export function isRunnelError(e: unknown): e is RunnelError {
  return e instanceof RunnelError;
}

/** A message safe to show for any thrown value. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
