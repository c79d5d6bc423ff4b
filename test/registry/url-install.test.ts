import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { refusedPort } from '../helpers/ports.js';
import { copyFixture, npmPack } from './support.js';

const SHOUT = 'node-red-contrib-shout';

/**
 * POST /nodes {module, url}: what the editor sends for a palette catalogue entry with a `pkg_url`.
 * A loopback server plays the package host.
 */
describe('POST /nodes with a catalogue pkg_url', { timeout: 180_000 }, () => {
  let work: string;
  let host: Server;
  let base: string;
  let server: TestServer;

  before(async () => {
    work = await tempDir('runnel-url-install-');
    const tgz = await readFile(await npmPack(await copyFixture(SHOUT, work), work));
    host = createServer((req, res) => {
      if (req.url === '/shout.tgz') return res.end(tgz);
      if (req.url === '/endless') {
        // No Content-Length: the size is only known by counting.
        const chunk = Buffer.alloc(64 * 1024);
        const pump = () => {
          while (res.write(chunk));
        };
        res.on('drain', pump);
        res.on('close', () => res.off('drain', pump));
        return pump();
      }
      if (req.url === '/big') {
        res.setHeader('Content-Length', String(50 * 1024 * 1024));
        return res.end();
      }
      res.statusCode = 404;
      res.end('no such package');
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    server = await startServer({ externalModules: { palette: { maxUploadSize: '1mb' } } });
  });
  after(async () => {
    await server?.dispose();
    host?.closeAllConnections();
    await new Promise((resolve) => host?.close(resolve));
    await removeDir(work);
  });

  const install = (json: Record<string, unknown>) => request(server.at('nodes'), { method: 'POST', json });

  it('fetches the tarball and installs it as the named module', async () => {
    const res = await install({ module: SHOUT, url: `${base}/shout.tgz` });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, SHOUT);
    assert.deepEqual(res.body.nodes.map((s: { types: string[] }) => s.types).flat(), ['shout']);
    assert.equal((await request(server.at(`nodes/${SHOUT}`))).body.version, '1.0.0');
    const removed = await request(server.at(`nodes/${SHOUT}`), { method: 'DELETE' });
    assert.equal(removed.status, 204, removed.text);
  });

  it('refuses a tarball that holds another module', async () => {
    const res = await install({ module: 'node-red-contrib-other', url: `${base}/shout.tgz` });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'invalid_module');
    assert.match(res.body.message, /holds node-red-contrib-shout/);
  });

  it('refuses URLs that are not http(s), and says why', async () => {
    for (const url of ['git+https://example.invalid/x.git', 'file:///etc/passwd', '/tmp/x.tgz', 'not a url']) {
      const res = await install({ module: SHOUT, url });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.code, 'invalid_module_url', url);
    }
  });

  it('answers 502 when the package host does not deliver', async () => {
    const missing = await install({ module: SHOUT, url: `${base}/missing.tgz` });
    assert.equal(missing.status, 502);
    assert.equal(missing.body.code, 'module_download_failed');
    assert.match(missing.body.message, /answered 404/);
    const port = await refusedPort();
    const unreachable = await install({ module: SHOUT, url: `http://127.0.0.1:${port}/shout.tgz` });
    assert.equal(unreachable.status, 502);
    assert.equal(unreachable.body.code, 'module_download_failed');
  });

  it('keeps a password or token in the URL out of the log and the answer', async () => {
    const seen = server.logs.length;
    const withPassword = await install({ module: SHOUT, url: `${base.replace('http://', 'http://someone:hunter2@')}/shout.tgz` });
    assert.deepEqual([withPassword.status, withPassword.body.code], [400, 'invalid_module_url'], withPassword.text);
    const withToken = await install({ module: SHOUT, url: `${base}/missing.tgz?token=tok3n` });
    assert.deepEqual([withToken.status, withToken.body.code], [502, 'module_download_failed'], withToken.text);
    const audit = server.logs.slice(seen).filter((l) => l.includes('"event":"nodes.install"') && /shout\.tgz|missing\.tgz/.test(l));
    assert.equal(audit.length, 2, server.logs.join('\n'));
    for (const text of [withPassword.text, withToken.text, ...server.logs]) {
      assert.doesNotMatch(text, /hunter2|tok3n/);
    }
  });

  it('stops at maxUploadSize, whether the host declares the size or not', async () => {
    for (const p of ['/big', '/endless']) {
      const res = await install({ module: SHOUT, url: `${base}${p}` });
      assert.equal(res.status, 413, p);
      assert.equal(res.body.code, 'payload_too_large', p);
    }
    const left = (await readdir(path.join(server.userDir, 'nodes')).catch(() => [])).filter((f) => f.endsWith('.tgz'));
    assert.deepEqual(left, [], 'no tarball is left behind');
  });

  it('is an upload: refused when uploads are disabled', async () => {
    const strict = await startServer({ externalModules: { palette: { allowUpload: false } } });
    try {
      const res = await request(strict.at('nodes'), { method: 'POST', json: { module: SHOUT, url: `${base}/shout.tgz` } });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'upload_not_allowed');
    } finally {
      await strict.dispose();
    }
  });
});
