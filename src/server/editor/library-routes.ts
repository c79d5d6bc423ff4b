import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { needsPermission } from '../../auth/guard.js';
import { RunnelError } from '../../base/errors.js';
import { libraryAnswer, noContentAnswer } from './schemas.js';

const params = {
  type: 'object',
  properties: { library: { type: 'string', maxLength: 64 }, type: { type: 'string', maxLength: 64 }, '*': { type: 'string', maxLength: 1024 } },
  required: ['library', 'type', '*'],
} as const;
type Params = { library: string; type: string; '*': string };

/**
 * The editor's libraries (import/export dialogs, function and template libraries): `local`, kept
 * through the Storage interface in Node-RED's layout, and `examples`, the `examples/` folders of
 * installed modules, read-only, listed by module name.
 */
export const libraryRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { auth, storage } = services;
  const nodes = services.admin.nodes;

  const send = (reply: FastifyReply, type: string, entry: string | unknown[]) =>
    typeof entry === 'string' ? reply.type(type === 'flows' ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8').send(entry) : reply.send(entry);

  const examples = async (type: string, entry: string): Promise<string | unknown[]> => {
    if (type !== 'flows') return [];
    const parts = entry.split('/').filter(Boolean);
    if (parts.length === 0) {
      const names: string[] = [];
      for (const mod of nodes.listModules()) {
        if (mod.path && (await stat(path.join(mod.path, 'examples')).then((s) => s.isDirectory(), () => false))) names.push(mod.name);
      }
      return names.sort();
    }
    const name = parts[0].startsWith('@') ? parts.splice(0, 2).join('/') : parts.splice(0, 1)[0];
    const dir = nodes.getModule(name)?.path;
    if (!dir) throw new RunnelError('not_found', `No examples for ${name}`);
    const root = path.join(dir, 'examples');
    const target = path.resolve(root, `.${path.posix.normalize(`/${parts.join('/')}`)}`);
    if (target !== root && !target.startsWith(root + path.sep)) throw new RunnelError('not_found', 'No such example');
    const info = await stat(target).catch(() => null);
    if (info?.isFile()) return readFile(target, 'utf8');
    if (!info) throw new RunnelError('not_found', 'No such example');
    const entries = await readdir(target, { withFileTypes: true });
    return [...entries.filter((e) => e.isDirectory()).map((e) => e.name).sort(), ...entries.filter((e) => e.isFile() && e.name.endsWith('.json')).map((e) => ({ fn: e.name.slice(0, -5) }))];
  };

  const read = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const { library, type } = request.params;
    const entry = request.params['*'] ?? '';
    if (library === 'local') return send(reply, type, await storage.getLibraryEntry(type, entry));
    if (library === 'examples') {
      // Example files are listed without their .json; the editor asks for them by that name.
      const found = await examples(type, entry).catch(async (err: unknown) => {
        if (entry.endsWith('.json') || !(err instanceof RunnelError)) throw err;
        return examples(type, `${entry}.json`);
      });
      return send(reply, type, found);
    }
    throw new RunnelError('not_found', `No library ${library}`);
  };
  const readOnly = { onRequest: needsPermission(auth, 'library.read'), schema: { params: { ...params, required: ['library', 'type'] }, response: libraryAnswer } };
  app.get<{ Params: Params }>('/library/:library/:type/*', readOnly, read);
  // A folder's URL ends in `/`, which the router drops before matching.
  app.get<{ Params: Params }>('/library/:library/:type', readOnly, read);

  app.post<{ Params: Params; Body: unknown }>('/library/:library/:type/*', { onRequest: needsPermission(auth, 'library.write'), schema: { params, response: noContentAnswer } }, async (request: FastifyRequest<{ Params: Params; Body: unknown }>, reply) => {
    const { library, type } = request.params;
    if (library !== 'local') throw new RunnelError('forbidden', `The ${library} library is read-only`);
    const body = request.body;
    if (body === null || typeof body !== 'object') throw new RunnelError('invalid_request', 'Send the entry as JSON');
    if (type === 'flows') {
      await storage.saveLibraryEntry(type, request.params['*'], {}, JSON.stringify(body));
    } else {
      const { text, ...meta } = body as Record<string, unknown>;
      if (typeof text !== 'string') throw new RunnelError('invalid_request', 'Send {text, ...meta}');
      await storage.saveLibraryEntry(type, request.params['*'], meta, text);
    }
    return reply.code(204).send();
  });
};
