import type {} from '@fastify/swagger';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from './services.js';
import type { ProjectsApi } from '../runtime/api/projects.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../base/errors.js';
import { requester } from './deploy-request.js';
import { errorResponses } from './schemas.js';

/**
 * Node-RED's Projects admin API (editorTheme.projects.enabled), as @node-red/editor-api serves it:
 * the same paths, bodies and answers, `projects.read` / `projects.write` permissions. Each route
 * is its schema, its permission and one call.
 */

const anyObject = { type: 'object', additionalProperties: true } as const;
const ok = (summary: string, body: object = anyObject) => ({ summary, response: { 200: body, ...errorResponses } });
const noContent = (summary: string) => ({ summary, response: { 204: { type: 'null' }, ...errorResponses } });
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;
const pathParams = { type: 'object', required: ['id', '*'], properties: { id: { type: 'string' }, '*': { type: 'string' } } } as const;
const textBody = (key: string) => ({ type: 'object', required: [key], properties: { [key]: { type: 'string' } } });

type Req = FastifyRequest<{ Params: { id: string; '*'?: string; treeish?: string; type?: string; sha?: string; branch?: string; remote?: string }; Body: Record<string, unknown> | undefined; Querystring: Record<string, string | undefined> }>;

export const projectsRoutes: FastifyPluginAsync<{ services: Services; projects: ProjectsApi }> = async (app, { services, projects }) => {
  const read = needsPermission(services.auth, 'projects.read');
  const write = needsPermission(services.auth, 'projects.write');
  const get = (path: string, schema: object, handler: (r: Req, reply: FastifyReply) => Promise<unknown>) =>
    app.get(path, { onRequest: read, schema }, (r, reply) => handler(r as Req, reply));
  const change = (method: 'POST' | 'PUT' | 'DELETE', path: string, schema: object, handler: (r: Req, reply: FastifyReply) => Promise<unknown>) =>
    app.route({ method, url: path, onRequest: write, schema, handler: (r, reply) => handler(r as Req, reply) });
  const body = (r: Req) => r.body ?? {};
  const done = async (reply: FastifyReply, work: Promise<unknown>) => {
    await work;
    return reply.code(204).send();
  };

  get('/projects', ok('The projects and the active one'), () => projects.list());
  change('POST', '/projects', { ...ok('Creates a project (empty, a clone of git.remotes.origin, or a copy of the project named by copy) and opens it'), body: anyObject }, (r) => projects.create(body(r), requester(r)));
  get('/projects/:id', { ...ok('A project: summary, description, files, git remotes and branches'), params: idParams }, (r) => projects.get(r.params.id));
  change('PUT', '/projects/:id', { ...ok('Opens a project ({active: true, clearContext}) or changes its settings'), params: idParams, body: anyObject }, async (r) => {
    const b = body(r);
    if (b.active === true) return projects.activate(r.params.id, b.clearContext !== false, requester(r));
    const keys = ['credentialSecret', 'description', 'dependencies', 'summary', 'version', 'files'];
    if (!keys.some((k) => k in b)) throw new RunnelError('invalid_request', `Send active: true, or one of ${keys.join(', ')}`);
    return projects.update(r.params.id, b, requester(r));
  });
  change('DELETE', '/projects/:id', { ...noContent('Deletes a project that is not the active one'), params: idParams }, (r, reply) => done(reply, projects.remove(r.params.id, requester(r))));

  get('/projects/:id/status', {
    ...ok('Files with their git status, commits ahead and behind, branches (?remote=true fetches first)'), params: idParams,
    querystring: { type: 'object', properties: { remote: { type: 'string' } } },
  }, (r) => projects.status(r.params.id, r.query.remote === 'true', requester(r)));
  get('/projects/:id/files', { ...ok('Every file of the working copy'), params: idParams }, (r) => projects.files(r.params.id));
  get('/projects/:id/files/:treeish/*', {
    ...ok('A file in a commit, a merge stage (:0 the index, :1 base, :2 ours, :3 theirs) or the working copy (_)', textBody('content')),
    params: { type: 'object', required: ['id', 'treeish', '*'], properties: { id: { type: 'string' }, treeish: { type: 'string' }, '*': { type: 'string' } } },
  }, async (r) => ({ content: await projects.file(r.params.id, r.params.treeish ?? '', r.params['*'] ?? '') }));
  change('DELETE', '/projects/:id/files/_/*', { ...noContent('Reverts a file to its last commit and deploys the flows'), params: pathParams }, (r, reply) => done(reply, projects.revert(r.params.id, r.params['*'] ?? '', requester(r))));

  change('POST', '/projects/:id/stage', {
    ...ok('Stages files'), params: idParams,
    body: { type: 'object', required: ['files'], properties: { files: { type: 'array', items: { type: 'string' }, maxItems: 10_000 } } },
  }, (r) => projects.stage(r.params.id, body(r).files as string[]));
  change('POST', '/projects/:id/stage/*', { ...ok('Stages a file'), params: pathParams }, (r) => projects.stage(r.params.id, [r.params['*'] ?? '']));
  change('DELETE', '/projects/:id/stage', { ...ok('Unstages every file'), params: idParams }, (r) => projects.unstage(r.params.id, undefined));
  change('DELETE', '/projects/:id/stage/*', { ...ok('Unstages a file'), params: pathParams }, (r) => projects.unstage(r.params.id, r.params['*'] ?? ''));
  change('POST', '/projects/:id/commit', { ...ok('Commits the staged files'), params: idParams, body: textBody('message') }, (r) => projects.commit(r.params.id, body(r).message, requester(r)));

  get('/projects/:id/diff/:type/*', {
    ...ok('The diff of a file: working copy against index (tree) or index against HEAD (index)', textBody('diff')),
    params: { type: 'object', required: ['id', 'type', '*'], properties: { id: { type: 'string' }, type: { type: 'string', enum: ['tree', 'index'] }, '*': { type: 'string' } } },
  }, async (r) => ({ diff: await projects.diff(r.params.id, r.params.type ?? '', r.params['*'] ?? '') }));
  get('/projects/:id/commits', {
    ...ok('Commits, newest first'), params: idParams,
    querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 20 }, before: { type: 'string' } } },
  }, (r) => projects.commits(r.params.id, Number(r.query.limit), r.query.before));
  get('/projects/:id/commits/:sha', {
    ...ok('One commit as git show prints it', textBody('commit')),
    params: { type: 'object', required: ['id', 'sha'], properties: { id: { type: 'string' }, sha: { type: 'string' } } },
  }, async (r) => ({ commit: await projects.show(r.params.id, r.params.sha ?? '') }));

  get('/projects/:id/branches', { ...ok('Local branches'), params: idParams }, (r) => projects.branches(r.params.id));
  change('POST', '/projects/:id/branches', {
    ...ok('Checks out a branch (create: true makes it) and deploys its flows'), params: idParams,
    body: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, create: { type: 'boolean' } } },
  }, (r) => projects.setBranch(r.params.id, body(r).name, body(r).create === true, requester(r)));
  change('DELETE', '/projects/:id/branches/:branch', {
    ...noContent('Deletes a local branch (?force=true when it is not merged)'),
    params: { type: 'object', required: ['id', 'branch'], properties: { id: { type: 'string' }, branch: { type: 'string' } } },
  }, (r, reply) => done(reply, projects.deleteBranch(r.params.id, r.params.branch ?? '', r.query.force === 'true', requester(r))));
  get('/projects/:id/branches/remote', { ...ok('Fetches every remote, then lists the remote branches'), params: idParams }, (r) => projects.remoteBranches(r.params.id, requester(r)));
  get('/projects/:id/branches/remote/*', { ...ok('How far HEAD is ahead of and behind a remote branch (…/origin/main/status)'), params: pathParams }, async (r) => {
    const m = /^(.+)\/status$/.exec(r.params['*'] ?? '');
    if (!m) throw new RunnelError('not_found', 'GET /projects/:id/branches/remote/<remote>/<branch>/status');
    return projects.branchStatus(r.params.id, m[1]);
  });

  const remoteParams = { type: 'object', required: ['id', 'remote'], properties: { id: { type: 'string' }, remote: { type: 'string' } } } as const;
  get('/projects/:id/remotes', { ...ok('The remotes with their fetch and push URLs'), params: idParams }, (r) => projects.remotes(r.params.id));
  change('POST', '/projects/:id/remotes', {
    ...ok('Adds a remote ({name, url}, with username and password for HTTPS)'), params: idParams,
    body: { type: 'object', required: ['name', 'url'], properties: { name: { type: 'string' }, url: { type: 'string' }, username: { type: 'string' }, password: { type: 'string' } } },
  }, (r) => projects.addRemote(r.params.id, body(r), requester(r)));
  change('DELETE', '/projects/:id/remotes/:remote', { ...ok('Removes a remote'), params: remoteParams }, (r) => projects.removeRemote(r.params.id, r.params.remote ?? '', requester(r)));
  change('PUT', '/projects/:id/remotes/:remote', { ...noContent('Sets the credentials for a remote ({auth: {username, password}}), kept in memory'), params: remoteParams, body: anyObject }, (r, reply) =>
    done(reply, projects.updateRemote(r.params.id, r.params.remote ?? '', body(r).auth, requester(r))));

  const pushQuery = { type: 'object', properties: { u: { type: 'string' } } } as const;
  const pullQuery = { type: 'object', properties: { setUpstream: { type: 'string' }, allowUnrelatedHistories: { type: 'string' } } } as const;
  for (const suffix of ['', '/*']) {
    change('POST', `/projects/:id/push${suffix}`, { ...noContent('Pushes to a remote branch (origin/main), or the upstream; ?u=true tracks it'), params: suffix ? pathParams : idParams, querystring: pushQuery }, (r, reply) =>
      done(reply, projects.push(r.params.id, r.params['*'] || undefined, r.query.u === 'true', requester(r))));
    change('POST', `/projects/:id/pull${suffix}`, { ...noContent('Pulls a remote branch (or the upstream) and deploys the merged flows'), params: suffix ? pathParams : idParams, querystring: pullQuery }, (r, reply) =>
      done(reply, projects.pull(r.params.id, r.params['*'] || undefined, r.query.setUpstream === 'true', r.query.allowUnrelatedHistories === 'true', requester(r))));
  }
  change('POST', '/projects/:id/resolve/*', { ...noContent('Resolves a conflicted file ({resolutions}: the text, or a choice per conflict) and stages it'), params: pathParams, body: anyObject }, (r, reply) =>
    done(reply, projects.resolve(r.params.id, r.params['*'] ?? '', body(r).resolutions)));
  change('DELETE', '/projects/:id/merge', { ...noContent('Aborts a merge and deploys the flows as they were'), params: idParams }, (r, reply) => done(reply, projects.abortMerge(r.params.id, requester(r))));

  // The user's SSH keys, under settings.write as in Node-RED (reading a key is a step of managing them).
  const keys = needsPermission(services.auth, 'settings.write');
  const keyParams = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } as const;
  app.get('/settings/user/keys', { onRequest: keys, schema: ok('Your SSH keys, by name') }, (r) => projects.keys.list(requester(r)));
  app.get<{ Params: { name: string } }>('/settings/user/keys/:name', { onRequest: keys, schema: { ...ok('One of your SSH keys: its public key', textBody('publickey')), params: keyParams } }, (r) =>
    projects.keys.publicKey(r.params.name, requester(r)));
  app.post<{ Body: Record<string, unknown> }>('/settings/user/keys', { onRequest: keys, schema: { ...ok('Generates an SSH key pair ({name, comment, password, size}) with ssh-keygen'), body: anyObject } }, (r) =>
    projects.keys.generate(r.body, requester(r)));
  app.delete<{ Params: { name: string } }>('/settings/user/keys/:name', { onRequest: keys, schema: { ...noContent('Deletes one of your SSH keys'), params: keyParams } }, (r, reply) =>
    done(reply, projects.keys.remove(r.params.name, requester(r))));
};
