import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { npmPack } from '../registry/support.js';

/** The package the loopback registry serves: `pad(s, n, c)` pads on the left. */
export const PAD_PACKAGE = 'runnel-fixture-pad';
const TGZ_PATH = `/${PAD_PACKAGE}/-/${PAD_PACKAGE}-1.0.0.tgz`;

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

/** Another package a loopback registry serves: its package.json and `npm pack` tarball. */
export interface ServedPackage {
  manifest: { name: string; version: string; [key: string]: unknown };
  tgz: Buffer;
}

/** `integrity` and `shasum` of a tarball, as a registry's version document gives them. */
const digests = (tgz: Buffer) => ({ shasum: createHash('sha1').update(tgz).digest('hex'), integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}` });

/**
 * Serves the packed pad package (and `more`) as a package registry on 127.0.0.1 and records the
 * paths asked for. With `gate`, answers about the pad package wait for it: an install stays under
 * way until then.
 */
export async function loopbackRegistry(tgz: Buffer, gate?: () => Promise<void>, more: ServedPackage[] = []): Promise<LoopbackRegistry> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const name = decodeURIComponent((req.url ?? '').slice(1));
    const other = more.find((p) => p.manifest.name === name);
    const otherTarball = more.find((p) => req.url === `/-/tarballs/${encodeURIComponent(p.manifest.name)}-${p.manifest.version}.tgz`);
    if (other) {
      const { manifest } = other;
      const dist = { tarball: `${base}/-/tarballs/${encodeURIComponent(manifest.name)}-${manifest.version}.tgz`, ...digests(other.tgz) };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ name, 'dist-tags': { latest: manifest.version }, versions: { [manifest.version]: { ...manifest, dist } } }));
    } else if (otherTarball) {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(otherTarball.tgz);
    } else if (req.url === `/${PAD_PACKAGE}`) {
      const dist = { tarball: `${base}${TGZ_PATH}`, ...digests(tgz) };
      const body = JSON.stringify({ name: PAD_PACKAGE, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name: PAD_PACKAGE, version: '1.0.0', main: 'index.js', dist } } });
      void (gate?.() ?? Promise.resolve()).then(() => {
        res.setHeader('content-type', 'application/json');
        res.end(body);
      });
    } else if (req.url === TGZ_PATH) {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(tgz);
    } else {
      res.statusCode = 404;
      res.setHeader('content-type', 'application/json');
      res.end('{"error":"Not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, requests };
}
