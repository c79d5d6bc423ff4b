import FindMyWay from 'find-my-way';

/**
 * The admin API's paths, for the http-in entry: a request naming one never reaches a flow's
 * route, whatever its method, case or spelling. Fastify routes the admin API by exact method,
 * case and bytes, while http-in routes (like Express) ignore case and a catch-all route (`/*`,
 * `/:a/:b`) takes any path, so `POST /Auth/Token`, `GET //flows`, `PUT /flows`, `/flows%2f` or a
 * `/credentials/...` path past Fastify's parameter length reached a flow with the admin's
 * password or token; so did `/flows.json`, `/flows%252f` (escaped twice) and the methods `/comms`
 * and the module routes do not take. Routes nodes add through RED.httpAdmin still see such
 * requests first.
 */
export class AdminPaths {
  // No parameter length limit: a path too long for the admin router is still the admin's.
  private readonly router = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: Number.MAX_SAFE_INTEGER });
  /** The methods of each path pattern, keyed by the pattern without its parameters' names. */
  private readonly methods = new Map<string, Set<string>>();
  private readonly root: string;

  /** @param adminRoot - httpAdminRoot: the root itself (the editor's page) is left to http-in's other methods. */
  constructor(adminRoot: string) {
    this.root = adminRoot.replace(/\/+$/, '').toLowerCase();
  }

  /** Adds an admin route's method and path; every method on the path is the API's. */
  add(method: string, url: string): void {
    const key = url.toLowerCase().replace(/:[\w-]+/g, ':');
    if (key.replace(/\/+$/, '') === this.root) return;
    const known = this.methods.get(key);
    if (known) return void known.add(method);
    this.methods.set(key, new Set([method]));
    try {
      this.router.on('GET', url, () => undefined, { key });
    } catch {
      // The same pattern with a regexp find-my-way reads otherwise: already in under another key.
    }
  }

  /**
   * The methods the admin API takes on `url` once normalised (normalPath), with or without an
   * extension on its last segment (`/flows.json`); undefined when it names no admin path. A path
   * the router cannot read counts as one, taking no method.
   */
  methodsOf(url: string): string[] | undefined {
    let path: string;
    try {
      path = normalPath(url);
      const bare = path.replace(EXTENSION, '$1');
      // Most paths have no extension: a second lookup of the same path is wasted on every http-in request.
      const found = this.router.find('GET', path) ?? (bare === path ? null : this.router.find('GET', bare));
      if (!found) return undefined;
      return [...(this.methods.get((found.store as { key: string }).key) ?? [])];
    } catch {
      return [];
    }
  }
}

/** The last segment and its extension (`/flows` and `.json`); a segment that is only one (`/.x`) has none. */
const EXTENSION = /(\/[^/]+)\.[^/.]*$/;

/** How many times a path is decoded: a proxy or a framework may decode it once more than Runnel. */
const DECODINGS = 3;

/** The spellings normalPath rewrites: percent-escapes, empty or dot segments, `;` parameters. */
const UNUSUAL = /%|\/\/|\/\.|;/;

/**
 * The path of `url` as a server that decodes and resolves it reads it: the scheme and host of an
 * absolute URL dropped, percent-escapes decoded (`%2f` separates), empty and `.` segments dropped,
 * `..` applied, `;` parameters cut off. The result escapes `%`, `?` and `#` for the router.
 */
function normalPath(url: string): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  if (path.charCodeAt(0) !== 47) path = path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  else if (!UNUSUAL.test(path)) return path;
  let decoded = path;
  for (let i = 0; i < DECODINGS && decoded.includes('%'); i++) decoded = decode(decoded);
  const segments: string[] = [];
  for (const part of decoded.split('/')) {
    const semi = part.indexOf(';');
    const segment = semi === -1 ? part : part.slice(0, semi);
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`.replace(/[%?#]/g, (c) => encodeURIComponent(c));
}

/** decodeURIComponent, escape by escape where the whole is malformed (a lone `%` or broken UTF-8). */
function decode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path.replace(/%[0-9a-f]{2}/gi, (escape) => {
      try {
        return decodeURIComponent(escape);
      } catch {
        return escape;
      }
    });
  }
}
