import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { anyObject } from './schemas.js';
import { NODE_RED_COMPAT_VERSION } from '../version.js';
import { settingsViewFor } from '../runtime/settings-view.js';

/** GET /settings: what a client (CLI, dashboard, the editor) needs to know about this runtime. */
export const settingsRoutes: FastifyPluginAsync<{ services: Services; editor: Record<string, unknown> }> = async (app, { services, editor }) => {
  const { settings, runtime, auth } = services;
  app.get('/settings', { onRequest: needsPermission(auth, 'settings.read'), schema: { response: { 200: anyObject } } }, async (request) => {
    const palette = settings.externalModules.palette;
    const body: Record<string, unknown> = {
      httpNodeRoot: settings.httpNodeRoot,
      version: NODE_RED_COMPAT_VERSION,
      runnel: { version: runtime.version },
      flowEncryptionType: runtime.credentialKey.type,
      flowFilePretty: settings.flowFilePretty || undefined,
      context: runtime.context.listStores(),
      externalModules: { palette: { allowInstall: palette.allowInstall, allowUpload: palette.allowUpload } },
      functionTimeout: settings.functionTimeout,
      state: runtime.getState().state,
      ...editor,
    };
    settingsViewFor(settings, NODE_RED_COMPAT_VERSION).exportNodeSettings(body);
    if (request.user) body.user = { username: request.user.username, permissions: request.user.scope.length === 1 ? request.user.scope[0] : request.user.scope };
    return body;
  });
};
