import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { anyObject } from './schemas.js';

/** GET /diagnostics: Node-RED's diagnostics report for support requests, secrets redacted. */
export const diagnosticsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { admin, auth } = services;
  app.get(
    '/diagnostics',
    { onRequest: needsPermission(auth, 'diagnostics.read'), schema: { summary: "Node-RED's diagnostics report, secrets redacted", response: { 200: anyObject } } },
    async () => admin.diagnostics.getReport(),
  );
};
