// basic-auth, cors and serve-static (the packages Node-RED uses for these settings) ship no types.
declare module 'basic-auth' {
  import type { IncomingMessage } from 'node:http';
  function auth(req: IncomingMessage): { name: string; pass: string } | undefined;
  export = auth;
}

declare module 'cors' {
  type Middleware = (req: any, res: any, next: (err?: unknown) => void) => void;
  function cors(options?: Record<string, unknown>): Middleware;
  export = cors;
}

declare module 'serve-static' {
  type Middleware = (req: any, res: any, next: (err?: unknown) => void) => void;
  function serveStatic(root: string, options?: Record<string, unknown>): Middleware;
  export = serveStatic;
}

declare module 'etag' {
  function etag(entity: string | Buffer, options?: { weak?: boolean }): string;
  export = etag;
}
