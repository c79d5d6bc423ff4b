import { createWriteStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { RunnelError, errorMessage } from '../base/errors.js';

/** A catalogue's package host that has not answered by then is not going to. */
const DOWNLOAD_TIMEOUT_MS = 120_000;

/**
 * Fetches a module tarball from an http(s) URL (a palette catalogue's `pkg_url`) into `file`,
 * refusing more than `maxBytes`. Other schemes — git, file, npm specifiers — are refused: npm
 * would run whatever they name, and a local file is installed by uploading it.
 */
export async function downloadTarball(url: string, file: string, maxBytes: number): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RunnelError('invalid_module_url', `Not a URL: ${url.slice(0, 200)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new RunnelError('invalid_module_url', `Only http: and https: URLs of a module tarball can be installed, not ${parsed.protocol}`);
  }
  // fetch refuses them, and its error would repeat the URL, password included.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new RunnelError('invalid_module_url', `A module URL may not carry a user name or password: ${urlForLogs(parsed)}`);
  }
  const shown = urlForLogs(parsed);
  let res: Response;
  try {
    res = await fetch(parsed, { redirect: 'follow', signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  } catch (e) {
    throw new RunnelError('module_download_failed', `Fetching ${shown} failed: ${errorMessage((e as { cause?: unknown }).cause ?? e)}`);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new RunnelError('module_download_failed', `Fetching ${shown} answered ${res.status} ${res.statusText}`.trim());
  }
  const declared = Number(res.headers.get('content-length'));
  if (declared > maxBytes) {
    await res.body.cancel();
    throw new RunnelError('payload_too_large', `The tarball at ${shown} is ${declared} bytes, more than ${maxBytes} (externalModules.palette.maxUploadSize)`);
  }
  let received = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > maxBytes) done(new RunnelError('payload_too_large', `The tarball at ${shown} is more than ${maxBytes} bytes (externalModules.palette.maxUploadSize)`));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(res.body as WebReadableStream), limit, createWriteStream(file));
  } catch (e) {
    if (e instanceof RunnelError) throw e;
    throw new RunnelError('module_download_failed', `Fetching ${shown} failed: ${errorMessage(e)}`);
  }
}

/** The URL without what may be a secret (a user and password, the query): what logs and answers show. */
export function urlForLogs(url: string | URL): string {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    return `${parsed.origin}${parsed.pathname}`.slice(0, 200);
  } catch {
    return '(not a URL)';
  }
}
