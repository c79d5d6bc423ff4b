import type { IncomingMessage, ServerResponse } from 'node:http';
import type Cors from 'cors';
import type ServeStatic from 'serve-static';
import { lazy } from '../../base/lazy.js';
import type { Settings } from '../../settings/settings.js';
import { ExpressRouter } from '../http-node/router.js';
import { decorate } from '../http-node/compat.js';
import type { UnservedHandler } from '../http-node/types.js';
import { basicAuthCheck, sendBasicAuthChallenge } from './basic-auth.js';
import type { RouteHandler } from '../../runtime/red-api/http-types.js';
import { setFileType } from '../http-node/mime.js';

/** Loaded only when httpStatic is set (serve-static brings `send` and its dependencies). */
const cors = lazy<typeof Cors>('cors');
const serveStatic = lazy<typeof ServeStatic>('serve-static');

/**
 * httpStatic: directories served (express.static's options) at their roots after every admin and
 * http-in route, as Node-RED mounts them last; per root its CORS, httpStaticAuth and middleware
 * come first. Undefined when nothing is configured.
 */
export function staticFiles(settings: Settings): UnservedHandler | undefined {
  if (settings.httpStatic.length === 0) return undefined;
  const router = new ExpressRouter();
  const check = settings.httpStaticAuth ? basicAuthCheck(settings.httpStaticAuth) : undefined;
  const auth = check
    ? (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
        if (req.method === 'OPTIONS') return next();
        Promise.resolve(check(req)).then((ok) => (ok ? next() : sendBasicAuthChallenge(res)), next);
      }
    : undefined;
  const seen = new Set<string>();
  for (const mount of settings.httpStatic) {
    const key = `${mount.path}::${mount.root}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (mount.cors) {
      const handler = cors()(mount.cors) as RouteHandler;
      router.options(mount.root, handler);
      router.use(mount.root, handler);
    }
    if (auth) router.use(mount.root, auth);
    if (mount.middleware) router.use(mount.root, mount.middleware);
    router.use(mount.root, serveStatic()(mount.path, withExpressTypes(mount.options)));
  }
  return (req, res, next) => {
    const { req: request } = decorate(req, res, undefined);
    router.handle(request, res, (err) => next(err));
  };
}

type SetHeaders = (res: ServerResponse, file: string, stat: unknown) => void;

/** Files get Express 4's types (mime 1.x), as Node-RED's express.static sends them; the settings' own setHeaders runs after. */
function withExpressTypes(options: Record<string, unknown> | undefined): Record<string, unknown> {
  const own = typeof options?.setHeaders === 'function' ? (options.setHeaders as SetHeaders) : undefined;
  const setHeaders: SetHeaders = (res, file, stat) => {
    setFileType(res, file);
    own?.(res, file, stat);
  };
  return { ...options, setHeaders };
}
