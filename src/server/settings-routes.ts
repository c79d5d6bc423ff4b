import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { anyObject } from './schemas.js';
import { NODE_RED_COMPAT_VERSION } from '../base/version.js';
import { settingsViewFor } from '../runtime/red-api/settings-view.js';

/**
 * GET /settings: what a client (CLI, dashboard, the editor) needs to know about this runtime, in
 * Node-RED's shape: `httpNodeRoot` with its trailing slash, `user` as Node-RED describes it
 * (`anonymous` for adminAuth.default), and without the editor only the keys Node-RED keeps then.
 */
export const settingsRoutes: FastifyPluginAsync<{ services: Services; editor: Record<string, unknown> }> = async (app, { services, editor }) => {
  const { settings, runtime, auth } = services;
  app.get('/settings', { onRequest: needsPermission(auth, 'settings.read'), schema: { response: { 200: anyObject } } }, async (request) => {
    const body: Record<string, unknown> = {
      httpNodeRoot: settings.httpNodeRoot.endsWith('/') ? settings.httpNodeRoot : `${settings.httpNodeRoot}/`,
      version: NODE_RED_COMPAT_VERSION,
      runnel: { version: runtime.version },
      state: runtime.getState().state,
    };
    const user = request.user;
    if (user) {
      const permissions = user.scope.length === 1 ? user.scope[0] : user.scope;
      body.user = user.anonymous ? { anonymous: true, permissions } : { username: user.username, permissions };
    }
    if (settings.disableEditor) return body;
    Object.assign(body, {
      flowEncryptionType: runtime.credentialKey.type,
      flowFilePretty: settings.flowFilePretty || undefined,
      context: runtime.context.listStores(),
      functionTimeout: settings.functionTimeout,
      ...editor,
    });
    settingsViewFor(settings, NODE_RED_COMPAT_VERSION).exportNodeSettings(body);
    return body;
  });
};
