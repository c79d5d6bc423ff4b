import type { Runtime } from '../runtime.js';
import { RunnelError } from '../../base/errors.js';

/** The editor's view of deployed nodes' credentials: GET /credentials/:type/:id. */
export interface CredentialsApi {
  /**
   * One deployed node's credentials as the editor shows them: text fields in clear, password fields
   * only as `has_<field>`; `{}` for a node that is not deployed. `type` is the node's type with '-'
   * for spaces; `not_found` when the node is of another type.
   */
  getForEditor(type: string, id: string): Record<string, unknown>;
}

export function credentialsApi(runtime: Runtime): CredentialsApi {
  return {
    getForEditor: (type, id) => {
      // The node's own type decides which fields are passwords: read through another type's
      // declarations a password field could come back as text.
      const node = runtime.getFlows().flows.find((n) => n.id === id);
      if (node === undefined) return {};
      if (node.type.replace(/ /g, '-') !== type) throw new RunnelError('not_found', `Node ${id} is not of type ${type}`);
      return runtime.credentials.forEditor(node.type, id);
    },
  };
}
