import { createSecureContext } from 'node:tls';
import type { Server as HttpsServer } from 'node:https';
import type { Logger } from '../../base/log.js';
import { SettingsError, type Settings } from '../../settings/settings.js';
import { checkTlsOptions, type TlsOptions } from '../../settings/http.js';

/** The `https` setting's options, its function called (and awaited) as Node-RED does at start. */
async function callHttps(settings: Settings): Promise<TlsOptions> {
  const https = settings.https;
  try {
    const options = typeof https === 'function' ? await https() : https;
    return checkTlsOptions(options);
  } catch (e) {
    if (e instanceof SettingsError) throw e;
    throw new SettingsError(`https: the settings function failed: ${(e as Error)?.message ?? String(e)}`);
  }
}

/**
 * The TLS options to serve with, or undefined for plain HTTP. A key that does not match its
 * certificate, or PEM that does not parse, is a start error naming OpenSSL's reason.
 */
export async function resolveTls(settings: Settings): Promise<TlsOptions | undefined> {
  if (settings.https === undefined) return undefined;
  const options = await callHttps(settings);
  try {
    createSecureContext(options);
  } catch (e) {
    throw new SettingsError(`https: the key and certificate cannot be used: ${(e as Error).message}`);
  }
  return options;
}

const differs = (a: unknown, b: unknown) =>
  a === undefined || (Buffer.isBuffer(a) && Buffer.isBuffer(b) ? !a.equals(b) : String(a) !== String(b));

/**
 * httpsRefreshInterval: calls the `https` function every so many hours and swaps the servers'
 * certificate when key or cert changed (renewed certificates without a restart). `servers` is read
 * at each refresh, so a listener started later (metrics.port) can be added. Returns a stop function.
 */
export function refreshTls(servers: readonly HttpsServer[], settings: Settings, initial: TlsOptions, log: Logger): () => void {
  const hours = settings.httpsRefreshInterval;
  if (hours === undefined) return () => {};
  let current = initial;
  log.info(`https settings are refreshed every ${hours} hours`);
  const timer = setInterval(() => {
    callHttps(settings)
      .then((next) => {
        if (!differs(current.key, next.key) && !differs(current.cert, next.cert)) return;
        for (const server of servers) server.setSecureContext(next);
        current = next;
        log.info('https settings refreshed');
      })
      .catch((e: unknown) => log.error(`https settings refresh failed: ${(e as Error).message}`));
  }, hours * 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}
