import pathToRegexp from 'path-to-regexp';
import { compileLinear, type LinearRegExp } from './linear-regexp.js';

/**
 * Express 4 path patterns, compiled by the very path-to-regexp release Express 4 (and so Node-RED)
 * uses: `/a/:id`, `/:id?`, `:id(\\d+)`, `:rest(*)`, `*`, RegExps and arrays, case-insensitive, a
 * trailing slash tolerated. Its output keeps a parameter that follows a literal in the same
 * segment from matching that literal again; the expression is then run by a linear-time matcher
 * (linear-regexp.ts), since Express's own output still backtracks polynomially for patterns such
 * as `/*-*:a-:b`. Compiled once per layer.
 */
export interface PathPattern {
  /** Express's expression, kept for modules that read `layer.regexp`. */
  regexp: RegExp;
  /** What requests are matched with: the same captures, in time linear in the path length. */
  matcher: LinearRegExp;
  /** Capture group names in order; `*` and bare groups get numbers, like Express. */
  keys: (string | number)[];
  /** `use('/')`: every path matches and nothing is trimmed (Express's fast_slash). */
  matchesAll: boolean;
  /** The route `*`: every path matches and params[0] is the whole path (Express's fast_star). */
  matchesAny: boolean;
}

export type PathSpec = string | RegExp | (string | RegExp)[];

/** Express's `case sensitive routing` and `strict routing` (a trailing slash matters) app settings. */
export interface RoutingOptions {
  caseSensitive?: boolean;
  strict?: boolean;
}

/**
 * @param end true for routes (the whole path must match); false for `use` prefixes, which must end
 *   at a `/` boundary.
 */
export function compilePath(path: PathSpec, end: boolean, routing: RoutingOptions = {}): PathPattern {
  const keys: { name: string | number }[] = [];
  const regexp = pathToRegexp(path, keys, { sensitive: routing.caseSensitive === true, strict: routing.strict === true, end });
  return { regexp, matcher: compileLinear(regexp) ?? regexp, keys: keys.map((k) => k.name), matchesAll: path === '/' && !end, matchesAny: path === '*' };
}

/** Express's decode_param: a malformed escape is the client's fault (400), not a crash. */
export function decodeParam(value: string | undefined): string | undefined {
  if (value === undefined || value.length === 0 || !value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    const err = new URIError(`Failed to decode param '${value}'`) as URIError & { status: number; statusCode: number };
    err.status = err.statusCode = 400;
    throw err;
  }
}
