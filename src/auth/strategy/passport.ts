import type { IncomingMessage } from 'node:http';
import type { SessionData } from './session.js';

/** How one run of a strategy's `authenticate` ended: the one action it took. */
export type Outcome =
  | { kind: 'success'; user: unknown; info: unknown }
  | { kind: 'fail'; challenge: unknown; status: number | undefined }
  | { kind: 'redirect'; url: string; status: number }
  | { kind: 'error'; error: unknown }
  | { kind: 'pass' };

/** What a Passport strategy reads of the request besides Node's own: Express's parsed parts and the session. */
export interface RequestParts {
  url: string;
  query: unknown;
  body: unknown;
  session: SessionData;
}

/**
 * The request a strategy sees: Node's IncomingMessage (headers, socket, method) with what Express
 * and express-session add that strategies use: `query`, `body`, `session`, `originalUrl`.
 */
export function passportRequest(raw: IncomingMessage, parts: RequestParts): IncomingMessage & RequestParts {
  const req = Object.create(raw) as IncomingMessage & RequestParts & { originalUrl: string };
  Object.assign(req, { url: parts.url, originalUrl: parts.url, query: parts.query ?? {}, body: parts.body ?? {}, session: parts.session });
  return req;
}

interface Actions {
  success(user: unknown, info?: unknown): void;
  fail(challenge?: unknown, status?: number): void;
  redirect(url: string, status?: number): void;
  pass(): void;
  error(err: unknown): void;
  authenticate(req: unknown, options: Record<string, unknown>): void;
}

/**
 * Runs `strategy.authenticate(req, options)` as passport's authenticate middleware does: on a fresh
 * object whose prototype is the strategy, with the five actions bound to it. The first action
 * decides; a strategy that takes none within `timeoutMs` (a provider that does not answer) ends in
 * an error instead of holding the browser.
 */
export function runStrategy(strategy: object, req: unknown, options: Record<string, unknown>, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ kind: 'error', error: new Error(`The identity provider did not answer within ${Math.round(timeoutMs / 1000)} s`) }), timeoutMs);
    const attempt = Object.create(strategy) as Actions;
    attempt.success = (user, info) => settle({ kind: 'success', user, info });
    attempt.fail = (challenge, status) => {
      if (typeof challenge === 'number') settle({ kind: 'fail', challenge: undefined, status: challenge });
      else settle({ kind: 'fail', challenge, status });
    };
    attempt.redirect = (url, status) => settle({ kind: 'redirect', url: String(url), status: status ?? 302 });
    attempt.pass = () => settle({ kind: 'pass' });
    attempt.error = (err) => settle({ kind: 'error', error: err });
    try {
      attempt.authenticate(req, options);
    } catch (e) {
      // Express would hand a throw to the error handler, which Node-RED's turns into a redirect.
      settle({ kind: 'error', error: e });
    }
  });
}
