import FindMyWay from 'find-my-way';
import type { HTTPMethod } from 'find-my-way';

/**
 * The admin API's routes, matched without regard to case. Fastify routes the admin API by exact
 * case while http-in routes ignore it (as Express does), so on a root both share, `POST /Auth/Token`
 * missed the admin route and reached a flow's `/auth/token` route with the admin's password. The
 * http-in side refuses every request that names an admin route in another case.
 */
export class AdminPaths {
  private readonly router = FindMyWay({ caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 500 });
  private readonly seen = new Set<string>();

  add(method: string | string[], url: string): void {
    for (const m of Array.isArray(method) ? method : [method]) {
      const key = `${m} ${url.toLowerCase()}`;
      if (this.seen.has(key) || url === '' || url === '/') continue;
      this.seen.add(key);
      this.router.on(m as HTTPMethod, url, () => undefined);
    }
  }

  /** Whether `method url` names an admin route, in any case. */
  covers(method: string, url: string): boolean {
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    try {
      return this.router.find(method as HTTPMethod, path) !== null || (method === 'HEAD' && this.router.find('GET', path) !== null);
    } catch {
      return false;
    }
  }
}
