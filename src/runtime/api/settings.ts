import type { Runtime } from '../runtime.js';
import type { Principal } from '../../auth/types.js';
import { NODE_RED_COMPAT_VERSION } from '../../base/version.js';
import { settingsViewFor } from '../red-api/settings-view.js';

/** What clients learn of this runtime's settings: GET /settings. */
export interface SettingsApi {
  /**
   * The settings a client (CLI, dashboard, the editor) needs, in Node-RED's shape: `httpNodeRoot`
   * with its trailing slash, `user` as Node-RED describes it (`anonymous` for adminAuth.default),
   * and without the editor only the keys Node-RED keeps then. `editor` (theme, editor options) and
   * the settings node types export are added when the editor is on.
   */
  getRuntimeSettings(user: Principal | undefined, editor: Record<string, unknown>): Record<string, unknown>;
}

export function settingsApi(runtime: Runtime): SettingsApi {
  const settings = runtime.settings;
  return {
    getRuntimeSettings: (user, editor) => {
      const body: Record<string, unknown> = {
        httpNodeRoot: settings.httpNodeRoot.endsWith('/') ? settings.httpNodeRoot : `${settings.httpNodeRoot}/`,
        version: NODE_RED_COMPAT_VERSION,
        runnel: { version: runtime.version },
        state: runtime.getState().state,
      };
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
    },
  };
}
