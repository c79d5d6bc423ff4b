import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { send } from './support.js';

/**
 * httpAdminMiddleware guards every admin route, the ones node modules add through RED.httpAdmin
 * included, whatever the roots: with the admin API at /admin and the flows at /, the inject node's
 * button route was reached through the flows' root without it, so users' own authentication in the
 * middleware left module routes open.
 */
for (const roots of [{ httpAdminRoot: '/admin', httpNodeRoot: '/' }, { httpAdminRoot: '/', httpNodeRoot: '/' }, { httpAdminRoot: '/red', httpNodeRoot: '/red' }]) {
  describe(`httpAdminMiddleware before RED.httpAdmin routes (admin ${roots.httpAdminRoot}, nodes ${roots.httpNodeRoot})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({
        ...roots,
        logging: { level: 'fatal' },
        // Stands in for a user's own authentication: only requests carrying the key get through.
        httpAdminMiddleware: (req: { headers: Record<string, string> }, res: { statusCode: number; end(s: string): void }, next: () => void) => {
          if (req.headers['x-key'] === 'let-me-in') return next();
          res.statusCode = 401;
          res.end('middleware says no');
        },
      });
      const flows = [{ id: 't1', type: 'tab' }, { id: 'button', type: 'inject', z: 't1', x: 1, y: 1, wires: [[]] }];
      const r = await request(server.at('flows'), { method: 'POST', json: flows, headers: { 'x-key': 'let-me-in' } });
      assert.equal(r.status, 204, r.text);
    });
    after(() => server.dispose());

    it('a module route is refused by the middleware and served past it', async () => {
      const refused = await send(server.at('inject/button'), { method: 'POST' });
      assert.equal(refused.status, 401);
      assert.equal(refused.text, 'middleware says no');
      const served = await send(server.at('inject/button'), { method: 'POST', headers: { 'x-key': 'let-me-in' } });
      assert.equal(served.status, 200, served.text);
    });

    it('the admin API itself stays behind the middleware', async () => {
      assert.equal((await send(server.at('settings'))).status, 401);
      assert.equal((await send(server.at('settings'), { headers: { 'x-key': 'let-me-in' } })).status, 200);
    });
  });
}
