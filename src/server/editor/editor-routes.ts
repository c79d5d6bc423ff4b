import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type MustacheModule from 'mustache';
import { lazy } from '../../base/lazy.js';

const Mustache = lazy<typeof MustacheModule>('mustache');
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import type { EditorLogin } from '../../auth/service.js';
import { RunnelError } from '../../base/errors.js';
import { RUNNEL_VERSION } from '../../base/version.js';
import { StaticFiles } from './static-files.js';
import type { Theme } from './theme.js';
import { CORE_MODULE, type NodeResources } from './node-resources.js';
import { requestLang } from './lang.js';
import { fileAnswer, pageAnswer, themeAnswer } from './schemas.js';
import { sendCompressed } from './compress.js';
import { withI18nextPlurals } from './plurals.js';

const require = createRequire(import.meta.url);
const CLIENT_DIR = path.dirname(require.resolve('@node-red/editor-client/package.json'));
const CLIENT_VERSION = (require('@node-red/editor-client/package.json') as { version: string }).version;
/** How the served editor takes a strategy login: Node-RED 5's exchanges a one-time `?code=`, 4's reads `?access_token=`. */
export const EDITOR_LOGIN: EditorLogin = Number(CLIENT_VERSION.split('.')[0]) >= 5 ? 'code' : 'access_token';
/** Namespaces the editor-client package carries itself. */
const CLIENT_NAMESPACES = new Set(['editor', 'jsonata', 'infotips']);

const wildcard = { type: 'object', properties: { '*': { type: 'string', maxLength: 1024 } }, required: ['*'] } as const;
const themeFileParams = {
  type: 'object',
  properties: { kind: { type: 'string', maxLength: 20 }, name: { type: 'string', maxLength: 255 } },
  required: ['kind', 'name'],
} as const;
const versionQuery = { type: 'object', properties: { v: { type: 'string', maxLength: 64 } } } as const;
const langQuery = { type: 'object', properties: { lng: { type: 'string', maxLength: 35 } } } as const;

/**
 * The Node-RED editor, served unchanged from the `@node-red/editor-client` package: the page
 * (index.mst rendered with the theme), its files, the theme and the editor's message catalogs.
 * None of these need a token, as in Node-RED: the editor asks for one once it has loaded.
 */
export const editorRoutes: FastifyPluginAsync<{ services: Services; theme: () => Theme; resources: NodeResources }> = async (app, { theme, resources }) => {
  const files = new StaticFiles(path.join(CLIENT_DIR, 'public'));
  const cacheBuster = createHash('sha1').update(`${CLIENT_VERSION}:${RUNNEL_VERSION}`).digest('hex').slice(0, 12);
  const template = await readFile(path.join(CLIENT_DIR, 'templates', 'index.mst'), 'utf8');
  // Rendered again only when the theme changes (a theme plugin installed or removed).
  let rendered: { theme: Theme; page: string; etag: string } | undefined;
  const renderPage = () => {
    const current = theme();
    if (rendered?.theme !== current) {
      const page = Mustache().render(template, { ...current.context, cacheBuster });
      rendered = { theme: current, page, etag: `"${createHash('sha1').update(page).digest('base64url')}"` };
    }
    return rendered;
  };

  const sendPage = async (request: FastifyRequest, reply: FastifyReply) => {
    // Relative asset URLs need the trailing slash (httpAdminRoot `/admin` → `/admin/`).
    const [pathname, query] = request.url.split('?', 2);
    if (!pathname.endsWith('/')) return reply.redirect(`${pathname}/${query === undefined ? '' : `?${query}`}`, 301);
    const { page, etag } = renderPage();
    reply.header('Cache-Control', 'no-cache').header('ETag', etag).type('text/html; charset=utf-8');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.send(page);
  };
  app.get('/', { schema: { response: pageAnswer } }, sendPage);

  const serveFrom = (prefix: string) => async (request: FastifyRequest<{ Params: { '*': string }; Querystring: { v?: string } }>, reply: FastifyReply) => {
    const immutable = request.query.v === cacheBuster;
    if (!(await files.serve(request, reply, `${prefix}/${request.params['*']}`, { immutable }))) throw new RunnelError('not_found', 'No such file');
    return reply;
  };
  for (const prefix of ['red', 'vendor', 'types']) {
    app.get(`/${prefix}/*`, { schema: { params: wildcard, querystring: versionQuery } }, serveFrom(prefix));
  }
  app.get('/favicon.ico', { schema: { response: fileAnswer } }, async (request, reply) => {
    if (!(await files.serve(request, reply, 'favicon.ico'))) throw new RunnelError('not_found', 'No such file');
    return reply;
  });

  app.get('/theme', { schema: { response: themeAnswer } }, async () => theme().context);
  const themeFiles = new Map<string, StaticFiles>();
  app.get<{ Params: { kind: string; name: string } }>('/theme/:kind/:name', { schema: { params: themeFileParams, response: fileAnswer } }, async (request, reply) => {
    const file = theme().files.get(`theme/${request.params.kind}/${encodeURIComponent(request.params.name)}`);
    if (!file) throw new RunnelError('not_found', 'No such theme file');
    const dir = path.dirname(file);
    let served = themeFiles.get(dir);
    if (!served) themeFiles.set(dir, (served = new StaticFiles(dir)));
    if (!(await served.serve(request, reply, encodeURIComponent(path.basename(file))))) throw new RunnelError('not_found', 'No such theme file');
    return reply;
  });

  // GET /locales/<namespace>: a namespace may be a set id (`module/set`, `@scope/module/set`).
  app.get<{ Params: { '*': string }; Querystring: { lng?: string } }>('/locales/*', { schema: { params: wildcard, querystring: langQuery } }, async (request, reply) => {
    const namespace = request.params['*'].replace(/\.json$/, '');
    const lang = requestLang(request);
    reply.header('Cache-Control', 'no-cache');
    if (CLIENT_NAMESPACES.has(namespace)) {
      for (const l of [lang, lang.split('-')[0], 'en-US']) {
        const text = await readFile(path.join(CLIENT_DIR, 'locales', l, `${namespace}.json`), 'utf8').catch(() => undefined);
        if (text !== undefined) return sendCompressed(request, reply, JSON.stringify(withI18nextPlurals(JSON.parse(text) as Record<string, unknown>)), 'application/json; charset=utf-8');
      }
    }
    const catalog = namespace === CORE_MODULE || namespace.includes('/') ? await resources.catalog(namespace, lang) : undefined;
    return sendCompressed(request, reply, JSON.stringify(catalog ?? {}), 'application/json; charset=utf-8');
  });
};
