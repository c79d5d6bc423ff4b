import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { npmPack } from '../registry/support.js';

/** The package the loopback registry serves: `pad(s, n, c)` pads on the left. */
export const PAD_PACKAGE = 'runnel-fixture-pad';

/** Packs the pad package with npm, offline, under `work`; returns the .tgz path. */
export async function packPad(work: string): Promise<string> {
  const src = path.join(work, 'src');
  await mkdir(src, { recursive: true });
  await writeFile(path.join(src, 'package.json'), JSON.stringify({ name: PAD_PACKAGE, version: '1.0.0', main: 'index.js' }));
  await writeFile(path.join(src, 'index.js'), "module.exports = (s, n, c) => String(s).padStart(n, c === undefined ? ' ' : c);\n");
  const dest = path.join(work, 'packed');
  await mkdir(dest);
  return npmPack(src, dest);
}

export interface LoopbackRegistry {
  server: Server;
  url: string;
  /** Paths asked for, in order. */
  requests: string[];
}

/** Packed tarballs by package name and version; the highest version is `latest`. */
export type RegistryPackages = Record<string, Record<string, Buffer>>;

/**
 * Serves packed packages as a package registry on 127.0.0.1 and records the paths asked for.
 * With `gate`, answers about a package wait for it: an install stays under way until then.
 */
export async function packageRegistry(packages: RegistryPackages, gate?: () => Promise<void>): Promise<LoopbackRegistry> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const url = decodeURIComponent(req.url ?? '');
    const tarball = /^\/(.+)\/-\/[^/]+-(\d+\.\d+\.\d+)\.tgz$/.exec(url);
    const versions = packages[url.slice(1)];
    if (versions) {
      const name = url.slice(1);
      const manifests: Record<string, unknown> = {};
      for (const [version, tgz] of Object.entries(versions)) {
        const dist = {
          tarball: `${base}/${name}/-/${name.split('/').pop()}-${version}.tgz`,
          shasum: createHash('sha1').update(tgz).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
        };
        manifests[version] = { name, version, main: 'index.js', dist };
      }
      const latest = Object.keys(versions).sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).pop();
      const body = JSON.stringify({ name, 'dist-tags': { latest }, versions: manifests });
      void (gate?.() ?? Promise.resolve()).then(() => {
        res.setHeader('content-type', 'application/json');
        res.end(body);
      });
    } else if (tarball && packages[tarball[1]]?.[tarball[2]]) {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(packages[tarball[1]][tarball[2]]);
    } else {
      res.statusCode = 404;
      res.setHeader('content-type', 'application/json');
      res.end('{"error":"Not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, requests };
}

/** The pad package alone (see packPad). */
export function loopbackRegistry(tgz: Buffer, gate?: () => Promise<void>): Promise<LoopbackRegistry> {
  return packageRegistry({ [PAD_PACKAGE]: { '1.0.0': tgz } }, gate);
}
