import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { needsPermission } from '../../auth/guard.js';
import { RunnelError } from '../../base/errors.js';
import type { NodeResources } from './node-resources.js';
import { StaticFiles } from './static-files.js';
import { requestLang } from './lang.js';
import { sendCompressed } from './compress.js';
import { catalogAnswer, catalogsAnswer, fileAnswer, iconListAnswer, noContentAnswer, nodeSetAnswer, pluginSetAnswer, pluginsAnswer, userSettingsAnswer } from './schemas.js';
import { nodeModule } from '../schemas.js';
import { allPluginHtml, pluginCatalogs, pluginHtml } from './plugin-resources.js';

const name = { type: 'string', minLength: 1, maxLength: 214 } as const;
const setParams = { type: 'object', properties: { scope: name, module: name, set: name }, required: ['module', 'set'] } as const;
const moduleParams = { type: 'object', properties: { scope: name, module: name }, required: ['module'] } as const;
const iconParams = { type: 'object', properties: { scope: name, module: name, icon: name }, required: ['module', 'icon'] } as const;
const wildcard = { type: 'object', properties: { '*': { type: 'string', maxLength: 1024 } }, required: ['*'] } as const;
const userSettingsBody = { type: 'object', maxProperties: 200 } as const;

type SetParams = { scope?: string; module: string; set: string };
type IconParams = { scope?: string; module: string; icon: string };
const moduleOf = (p: { scope?: string; module: string }) => (p.scope === undefined ? p.module : `@${p.scope}/${p.module}`);

/** The editor asks for HTML with `Accept: text/html`; everything else gets JSON. */
export function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('text/html') && !accept.startsWith('application/json');
}

/**
 * The parts of Node-RED's editor API beyond the admin API's own routes: node sets' HTML and
 * message catalogs, icons, module resources, plugins (the list, and their editor templates)
 * and the per-user editor settings, kept through the Storage interface.
 */
export const editorApiRoutes: FastifyPluginAsync<{ services: Services; resources: NodeResources }> = async (app, { services, resources }) => {
  const { auth, storage } = services;
  const nodes = services.admin.nodes;
  const read = needsPermission(auth, 'nodes.read');

  app.get('/nodes/messages', { onRequest: read, schema: { response: catalogsAnswer } }, async (request, reply) =>
    sendCompressed(request, reply, JSON.stringify(await resources.allCatalogs(requestLang(request))), 'application/json; charset=utf-8'),
  );

  const findSet = (p: SetParams) => {
    const set = nodes.getSet(moduleOf(p), p.set);
    if (!set) throw new RunnelError('not_found', `No node set ${moduleOf(p)}/${p.set}`);
    return set;
  };
  const getSet = async (request: FastifyRequest<{ Params: SetParams }>, reply: FastifyReply) => {
    const set = findSet(request.params);
    if (!wantsHtml(request)) return nodes.getNodeInfo(set.module, set.name);
    return reply.type('text/html; charset=utf-8').send(await resources.setHtml(set, requestLang(request)));
  };
  const getSetMessages = async (request: FastifyRequest<{ Params: SetParams }>) => {
    const set = findSet(request.params);
    return (await resources.catalog(set.module === 'node-red' ? 'node-red' : set.id, requestLang(request))) ?? {};
  };
  for (const prefix of ['/nodes/:module/:set', '/nodes/@:scope/:module/:set']) {
    app.get<{ Params: SetParams }>(prefix, { onRequest: read, schema: { params: setParams, response: nodeSetAnswer } }, getSet);
    app.get<{ Params: SetParams }>(`${prefix}/messages`, { onRequest: read, schema: { params: setParams, response: catalogAnswer } }, getSetMessages);
  }

  app.get('/icons', { onRequest: read, schema: { response: iconListAnswer } }, async () => resources.iconLists());
  // Icons and resources are page assets: no token, as in Node-RED.
  const iconFiles = new Map<string, StaticFiles>();
  const serveFile = async (request: FastifyRequest, reply: FastifyReply, file: string) => {
    const dir = path.dirname(file);
    let files = iconFiles.get(dir);
    if (!files) iconFiles.set(dir, (files = new StaticFiles(dir)));
    return files.serve(request, reply, encodeURIComponent(path.basename(file)));
  };
  const getIcon = async (request: FastifyRequest<{ Params: IconParams }>, reply: FastifyReply) => {
    const file = (await resources.iconFile(moduleOf(request.params), request.params.icon)) ?? resources.defaultIcon;
    if (!(await serveFile(request, reply, file))) throw new RunnelError('not_found', 'No such icon');
    return reply;
  };
  app.get<{ Params: IconParams }>('/icons/:module/:icon', { schema: { params: iconParams, response: fileAnswer } }, getIcon);
  app.get<{ Params: IconParams }>('/icons/@:scope/:module/:icon', { schema: { params: iconParams, response: fileAnswer } }, getIcon);

  app.get<{ Params: { '*': string } }>('/resources/*', { schema: { params: wildcard } }, async (request, reply) => {
    const parts = request.params['*'].split('/');
    const moduleName = parts[0].startsWith('@') ? parts.splice(0, 2).join('/') : parts.splice(0, 1)[0];
    const dir = resources.resourcesDir(moduleName);
    if (!dir || parts.length === 0 || !(await new StaticFiles(dir).serve(request, reply, parts.join('/')))) {
      throw new RunnelError('not_found', 'No such resource');
    }
    return reply;
  });

  const plugins = needsPermission(auth, 'plugins.read');
  // Node-RED's plugin list (JSON) or, for the editor, the templates of the loaded plugins, each after its marker.
  app.get('/plugins', { onRequest: plugins, schema: { response: pluginsAnswer } }, async (request, reply) => {
    if (!wantsHtml(request)) return nodes.getPluginList();
    return reply.type('text/html; charset=utf-8').send(await allPluginHtml(nodes.listPluginSets()));
  });
  app.get('/plugins/messages', { onRequest: plugins, schema: { response: catalogsAnswer } }, async (request) => pluginCatalogs(nodes.listPluginSets(), requestLang(request)));
  // The module as GET /nodes/:module answers it; one plugin set, or its template for the editor
  // (which asks for it when a plugin/added event announces an install).
  const getModule = async (request: FastifyRequest<{ Params: { scope?: string; module: string } }>) => nodes.getModuleInfo(moduleOf(request.params));
  const getPluginSet = async (request: FastifyRequest<{ Params: SetParams }>, reply: FastifyReply) => {
    const module = moduleOf(request.params);
    if (!wantsHtml(request)) return nodes.getPluginInfo(module, request.params.set);
    const set = nodes.getPluginSet(module, request.params.set);
    return reply.type('text/html; charset=utf-8').send(set ? await pluginHtml(set) : '');
  };
  for (const prefix of ['/plugins/:module', '/plugins/@:scope/:module']) {
    app.get<{ Params: { scope?: string; module: string } }>(prefix, { onRequest: plugins, schema: { params: moduleParams, response: { 200: nodeModule } } }, getModule);
    app.get<{ Params: SetParams }>(`${prefix}/:set`, { onRequest: plugins, schema: { params: setParams, response: pluginSetAnswer } }, getPluginSet);
  }

  // Without adminAuth every editor shares the anonymous user `_`, as in Node-RED.
  const userName = (request: FastifyRequest) => request.user?.username ?? '_';
  app.get('/settings/user', { onRequest: needsPermission(auth, 'settings.read'), schema: { response: userSettingsAnswer } }, async (request) => storage.getUserSettings(userName(request)));
  app.post<{ Body: Record<string, unknown> }>(
    '/settings/user',
    { onRequest: needsPermission(auth, 'settings.write'), schema: { body: userSettingsBody, response: noContentAnswer } },
    async (request, reply) => {
      // Node-RED merges what is sent into what is stored.
      const user = userName(request);
      await storage.saveUserSettings(user, { ...(await storage.getUserSettings(user)), ...request.body });
      return reply.code(204).send();
    },
  );
};
