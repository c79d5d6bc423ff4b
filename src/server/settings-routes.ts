import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { anyObject } from './schemas.js';

/** GET /settings: what a client (CLI, dashboard, the editor) needs to know about this runtime (SettingsApi). */
export const settingsRoutes: FastifyPluginAsync<{ services: Services; editor: () => Record<string, unknown> }> = async (app, { services, editor }) => {
  const { admin, auth } = services;
  app.get('/settings', { onRequest: needsPermission(auth, 'settings.read'), schema: { response: { 200: anyObject } } }, async (request) =>
    admin.settings.getRuntimeSettings(request.user, editor()),
  );
};
