import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError, errorMessage, isRunnelError } from '../base/errors.js';
import { nodeModule, nodeSet, noContent } from './schemas.js';
import type { NodeResources } from './editor/node-resources.js';
import { wantsHtml } from './editor/editor-api-routes.js';
import { requestLang } from './editor/lang.js';
import { sendCompressed } from './editor/compress.js';
import { requester } from './deploy-request.js';

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
  const { auth, settings } = services;
  const nodes = services.admin.nodes;
  const palette = settings.externalModules.palette;
  const read = { onRequest: needsPermission(auth, 'nodes.read') };
  const write = { onRequest: needsPermission(auth, 'nodes.write') };

  // Scoped to this plugin: only POST /nodes accepts multipart, one file, no other fields.
  await app.register(multipart, { limits: { fileSize: palette.maxUploadSize, files: 1, fields: 0, parts: 1 } });
  // Fastify parses text/plain by default; no route here takes text, so it is a 415 like any other type.
  app.removeContentTypeParser('text/plain');

  // The editor asks for every set's HTML (definitions, edit templates, help) with Accept: text/html.
  app.get('/nodes', { ...read, schema: { response: { 200: { type: 'array', items: nodeSet } } } }, async (request, reply) =>
    wantsHtml(request) ? sendCompressed(request, reply, await resources.allHtml(requestLang(request)), 'text/html; charset=utf-8') : nodes.getNodeList(),
  );

  app.get<{ Params: ModuleParams }>('/nodes/:module', { ...read, schema: { params: moduleParams, response: { 200: nodeModule } } }, async (request) => nodes.getModuleInfo(moduleName(request.params)));
  app.get<{ Params: ModuleParams }>('/nodes/@:scope/:module', { ...read, schema: { params: scopedParams, response: { 200: nodeModule } } }, async (request) => nodes.getModuleInfo(moduleName(request.params)));

  app.post<{ Body: { module: string; version?: string; url?: string } | undefined }>(
    '/nodes',
    // Every parsed type but multipart is validated; multipart is read as a stream by receiveUpload.
    { ...write, schema: { body: { content: { 'application/json': { schema: installBody }, 'application/x-www-form-urlencoded': { schema: installBody } } }, response: { 200: nodeModule } } },
    async (request) => {
      if (request.isMultipart()) return nodes.installUpload((file) => receiveUpload(request, file), requester(request));
      if (!request.body) throw new RunnelError('invalid_request', 'Send {module} as JSON or a tarball as multipart/form-data');
      return nodes.installModule(request.body, requester(request));
    },
  );

  // The multipart parser's own errors (no boundary, a cut-off body) carry no status: the client's fault.
  const malformed = (e: unknown): never => {
    if (isRunnelError(e) || typeof (e as { statusCode?: unknown })?.statusCode === 'number') throw e;
    throw new RunnelError('invalid_multipart', `Malformed multipart body: ${errorMessage(e)}`);
  };

  /** Writes the upload's one file part, `tarball`, to `file`. */
  const receiveUpload = async (request: FastifyRequest, file: string) => {
    const part = await request.file().catch(malformed);
    if (!part) throw new RunnelError('invalid_request', 'The upload has no file part');
    if (part.fieldname !== 'tarball') {
      part.file.resume();
      throw new RunnelError('unexpected_field', `Unexpected file field "${part.fieldname}"; send the module as "tarball"`);
    }
    await pipeline(part.file, createWriteStream(file)).catch(malformed);
    if (part.file.truncated) throw new RunnelError('payload_too_large', `The tarball is larger than ${palette.maxUploadSize} bytes`);
  };

  const setModuleState = async (request: FastifyRequest<{ Params: ModuleParams; Body: { enabled: boolean } }>) =>
    nodes.setModuleState(moduleName(request.params), request.body.enabled, requester(request));
  app.put<{ Params: ModuleParams; Body: { enabled: boolean } }>('/nodes/:module', { ...write, schema: { params: moduleParams, body: enabledBody, response: { 200: nodeModule } } }, setModuleState);
  app.put<{ Params: ModuleParams; Body: { enabled: boolean } }>('/nodes/@:scope/:module', { ...write, schema: { params: scopedParams, body: enabledBody, response: { 200: nodeModule } } }, setModuleState);

  const setSetState = async (request: FastifyRequest<{ Params: SetParams; Body: { enabled: boolean } }>) =>
    nodes.setSetState(moduleName(request.params), request.params.set, request.body.enabled, requester(request));
  app.put<{ Params: SetParams; Body: { enabled: boolean } }>('/nodes/:module/:set', { ...write, schema: { params: setParams, body: enabledBody, response: { 200: nodeSet } } }, setSetState);
  app.put<{ Params: SetParams; Body: { enabled: boolean } }>('/nodes/@:scope/:module/:set', { ...write, schema: { params: scopedSetParams, body: enabledBody, response: { 200: nodeSet } } }, setSetState);

  const remove = async (request: FastifyRequest<{ Params: ModuleParams }>, reply: FastifyReply) => {
    await nodes.removeModule(moduleName(request.params), requester(request));
    return reply.code(204).send();
  };
  app.delete<{ Params: ModuleParams }>('/nodes/:module', { ...write, schema: { params: moduleParams, response: { 204: noContent } } }, remove);
  app.delete<{ Params: ModuleParams }>('/nodes/@:scope/:module', { ...write, schema: { params: scopedParams, response: { 204: noContent } } }, remove);
};
