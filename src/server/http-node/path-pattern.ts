/**
 * Express 4 path patterns (the path-to-regexp 0.1 dialect Node-RED flows are written in):
 * `/a/:id`, optional `/:id?`, custom `:id(\\d+)`, `*` wildcards, other regex characters kept as
 * regex, a tolerated trailing slash and case-insensitive matching. Compiled once per layer so a
 * request only runs a prebuilt RegExp.
 */
export interface PathPattern {
  regexp: RegExp;
  /** Capture group names in order; `*` and bare groups get numbers, like Express. */
  keys: (string | number)[];
  /** `use('/')`: every path matches and nothing is trimmed (Express's fast_slash). */
  matchesAll: boolean;
}

const PARAM = /^:(\w+)(\((?:\\.|[^\\()])+\))?([*?])?/;

/**
 * @param end true for routes (the whole path must match); false for `use` prefixes, which must end
 *   at a `/` boundary.
 */
export function compilePath(path: string, end: boolean): PathPattern {
  const keys: (string | number)[] = [];
  if (path === '/' && !end) return { regexp: /^/, keys, matchesAll: true };
  let unnamed = 0;
  let src = '';
  for (let i = 0; i < path.length; ) {
    const c = path[i];
    if (c === ':') {
      const m = PARAM.exec(path.slice(i));
      if (m) {
        keys.push(m[1]);
        const [, , custom, modifier] = m;
        // A `.` just before the param (`/:file.:ext`) also delimits it, as in Express.
        const afterDot = src.endsWith('\\.');
        const inner = custom ? custom.slice(1, -1) : afterDot ? '[^\\/.]+?' : '[^\\/]+?';
        const capture = modifier === '*' ? `(${inner}(?:\\/.+?)?)` : `(${inner})`;
        if (modifier === '?' && (src.endsWith('\\/') || afterDot)) {
          const sep = src.slice(-2);
          src = `${src.slice(0, -2)}(?:${sep}${capture})?`;
        } else {
          src += modifier === '?' ? `${capture}?` : capture;
        }
        i += m[0].length;
        continue;
      }
    }
    if (c === '*') {
      keys.push(unnamed++);
      src += '(.*)';
    } else if (c === '(' && path[i + 1] !== '?') {
      keys.push(unnamed++);
      src += c;
    } else if (c === '/' || c === '.') {
      src += `\\${c}`;
    } else if (c === '\\' && i + 1 < path.length) {
      src += c + path[i + 1];
      i++;
    } else {
      src += c;
    }
    i++;
  }
  // Non-strict routing: one trailing slash is optional whether or not the pattern has it.
  src += path.endsWith('/') ? '?' : '\\/?';
  src += end ? '$' : '(?=\\/|$)';
  return { regexp: new RegExp(`^${src}`, 'i'), keys, matchesAll: false };
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
