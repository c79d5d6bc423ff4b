import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError, errorMessage, isRunnelError } from '../base/errors.js';
import { moduleInfo, setInfo } from '../registry/info.js';
import { nodeModule, nodeSet, noContent } from './schemas.js';
import type { NodeResources } from './editor/node-resources.js';
import { wantsHtml } from './editor/editor-api-routes.js';
import { requestLang } from './editor/lang.js';
import { sendCompressed } from './editor/compress.js';
import { urlForLogs } from '../registry/download.js';

const nameSchema = { type: 'string', minLength: 1, maxLength: 214 } as const;
const moduleParams = { type: 'object', properties: { module: nameSchema }, required: ['module'] } as const;
const scopedParams = { type: 'object', properties: { scope: nameSchema, module: nameSchema }, required: ['scope', 'module'] } as const;
const setParams = { type: 'object', properties: { module: nameSchema, set: nameSchema }, required: ['module', 'set'] } as const;
const scopedSetParams = {
  type: 'object',
  properties: { scope: nameSchema, module: nameSchema, set: nameSchema },
  required: ['scope', 'module', 'set'],
} as const;
const enabledBody = {
  type: 'object',
  properties: { enabled: { type: 'boolean' } },
  required: ['enabled'],
} as const;
const installBody = {
  type: 'object',
  properties: {
    module: { type: 'string', minLength: 1, maxLength: 4096 },
    version: { type: 'string', minLength: 1, maxLength: 256 },
    url: { type: 'string', minLength: 1, maxLength: 4096, description: "A palette catalogue's pkg_url: an http(s) URL of the module's tarball" },
  },
  required: ['module'],
  additionalProperties: false,
} as const;

type ModuleParams = { module: string; scope?: string };
type SetParams = ModuleParams & { set: string };
const moduleName = (p: ModuleParams) => (p.scope === undefined ? p.module : `@${p.scope}/${p.module}`);

/** The node registry: list sets, read modules, install, upgrade, remove, enable and disable (spec §2.5, §4.5). */
export const nodesRoutes: FastifyPluginAsync<{ services: Services; resources: NodeResources }> = async (app, { services, resources }) => {
  const { runtime, auth, settings } = services;
  const registry = runtime.registry;
  const modules = runtime.modules;
  const palette = settings.externalModules.palette;
  const read = { onRequest: needsPermission(auth, 'nodes.read') };
  const write = { onRequest: needsPermission(auth, 'nodes.write') };

  // Scoped to this plugin: only POST /nodes accepts multipart, one file, no other fields.
  await app.register(multipart, { limits: { fileSize: palette.maxUploadSize, files: 1, fields: 0, parts: 1 } });
  // Fastify parses text/plain by default; no route here takes text, so it is a 415 like any other type.
  app.removeContentTypeParser('text/plain');

  // The editor asks for every set's HTML (definitions, edit templates, help) with Accept: text/html.
  app.get('/nodes', { ...read, schema: { response: { 200: { type: 'array', items: nodeSet } } } }, async (request, reply) =>
    wantsHtml(request)
      ? sendCompressed(request, reply, await resources.allHtml(requestLang(request)), 'text/html; charset=utf-8')
      : registry.allSets().map((set) => setInfo(set, registry.modules.get(set.module))),
  );

  const getModule = async (params: ModuleParams) => {
    const mod = registry.modules.get(moduleName(params));
    if (!mod) throw new RunnelError('not_found', `Module ${moduleName(params)} is not installed`);
    return moduleInfo(mod);
  };
  app.get<{ Params: ModuleParams }>('/nodes/:module', { ...read, schema: { params: moduleParams, response: { 200: nodeModule } } }, async (request) => getModule(request.params));
  app.get<{ Params: ModuleParams }>('/nodes/@:scope/:module', { ...read, schema: { params: scopedParams, response: { 200: nodeModule } } }, async (request) => getModule(request.params));

  /** One audit line per install or removal attempt, whatever its outcome. */
  const audited = async <T extends { name: string; version?: string } | void>(
    request: FastifyRequest,
    event: 'nodes.install' | 'nodes.remove',
    fields: Record<string, unknown>,
    task: () => Promise<T>,
  ): Promise<T> => {
    const who = { event, user: request.user?.username, ip: request.ip, reqId: request.id, ...fields };
    try {
      const result = await task();
      const done = result ? { module: result.name, version: result.version } : {};
      services.log.audit({ ...who, ...done, outcome: 'ok' }, event === 'nodes.install' ? 'node module installed' : 'node module removed');
      return result;
    } catch (err) {
      const code = err instanceof RunnelError ? err.code : 'internal_error';
      services.log.audit({ ...who, outcome: 'failed', code }, event === 'nodes.install' ? 'node module install failed' : 'node module removal failed');
      throw err;
    }
  };

  app.post<{ Body: { module: string; version?: string; url?: string } | undefined }>(
    '/nodes',
    // Every parsed type but multipart is validated; multipart is read as a stream by installUpload.
    { ...write, schema: { body: { content: { 'application/json': { schema: installBody }, 'application/x-www-form-urlencoded': { schema: installBody } } }, response: { 200: nodeModule } } },
    async (request) => {
      if (request.isMultipart()) return moduleInfo(await audited(request, 'nodes.install', { source: 'upload' }, () => installUpload(request)));
      const body = request.body;
      if (!body) throw new RunnelError('invalid_request', 'Send {module} as JSON or a tarball as multipart/form-data');
      const requested = { requested: body.module.slice(0, 256), requestedVersion: body.version, ...(body.url ? { url: urlForLogs(body.url) } : {}) };
      const url = body.url;
      const install = url ? () => modules.installFromUrl(body.module, url) : () => modules.install(body.module, body.version);
      return moduleInfo(await audited(request, 'nodes.install', requested, install));
    },
  );

  // The multipart parser's own errors (no boundary, a cut-off body) carry no status: the client's fault.
  const malformed = (e: unknown): never => {
    if (isRunnelError(e) || typeof (e as { statusCode?: unknown })?.statusCode === 'number') throw e;
    throw new RunnelError('invalid_multipart', `Malformed multipart body: ${errorMessage(e)}`);
  };

  const installUpload = async (request: FastifyRequest) => {
    if (!palette.allowInstall) throw new RunnelError('install_not_allowed', 'Installing modules is disabled');
    if (!palette.allowUpload) throw new RunnelError('upload_not_allowed', 'Uploading modules is disabled');
    const part = await request.file().catch(malformed);
    if (!part) throw new RunnelError('invalid_request', 'The upload has no file part');
    if (part.fieldname !== 'tarball') {
      part.file.resume();
      throw new RunnelError('unexpected_field', `Unexpected file field "${part.fieldname}"; send the module as "tarball"`);
    }
    const dir = await mkdtemp(path.join(os.tmpdir(), 'runnel-upload-'));
    try {
      const file = path.join(dir, 'module.tgz');
      await pipeline(part.file, createWriteStream(file)).catch(malformed);
      if (part.file.truncated) throw new RunnelError('payload_too_large', `The tarball is larger than ${palette.maxUploadSize} bytes`);
      return await modules.installTarball(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  const setModuleEnabled = async (params: ModuleParams, enabled: boolean) => moduleInfo(await modules.setModuleEnabled(moduleName(params), enabled));
  app.put<{ Params: ModuleParams; Body: { enabled: boolean } }>('/nodes/:module', { ...write, schema: { params: moduleParams, body: enabledBody, response: { 200: nodeModule } } }, async (request) =>
    setModuleEnabled(request.params, request.body.enabled),
  );
  app.put<{ Params: ModuleParams; Body: { enabled: boolean } }>('/nodes/@:scope/:module', { ...write, schema: { params: scopedParams, body: enabledBody, response: { 200: nodeModule } } }, async (request) =>
    setModuleEnabled(request.params, request.body.enabled),
  );

  const setSetEnabled = async (params: SetParams, enabled: boolean) =>
    setInfo(await modules.setSetEnabled(moduleName(params), params.set, enabled), registry.modules.get(moduleName(params)));
  app.put<{ Params: SetParams; Body: { enabled: boolean } }>('/nodes/:module/:set', { ...write, schema: { params: setParams, body: enabledBody, response: { 200: nodeSet } } }, async (request) =>
    setSetEnabled(request.params, request.body.enabled),
  );
  app.put<{ Params: SetParams; Body: { enabled: boolean } }>(
    '/nodes/@:scope/:module/:set',
    { ...write, schema: { params: scopedSetParams, body: enabledBody, response: { 200: nodeSet } } },
    async (request) => setSetEnabled(request.params, request.body.enabled),
  );

  const remove = async (request: FastifyRequest<{ Params: ModuleParams }>, reply: FastifyReply) => {
    const name = moduleName(request.params);
    await audited(request, 'nodes.remove', { module: name }, () => modules.remove(name));
    return reply.code(204).send();
  };
  app.delete<{ Params: ModuleParams }>('/nodes/:module', { ...write, schema: { params: moduleParams, response: { 204: noContent } } }, remove);
  app.delete<{ Params: ModuleParams }>('/nodes/@:scope/:module', { ...write, schema: { params: scopedParams, response: { 204: noContent } } }, remove);
};
