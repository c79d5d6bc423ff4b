// oidc-provider ships no types; the tests use its constructor, request handler and session store only.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    readonly Session: { find(id: string): Promise<{ sidFor(clientId: string): string } | undefined> };
  }
}
