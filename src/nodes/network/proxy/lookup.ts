/**
 * Which proxy a URL goes through, as Node-RED's network nodes decide it: `<scheme>_proxy`, then
 * `npm_config_proxy` / `all_proxy`, unless `no_proxy` names the host (exact, `.suffix` or `*.suffix`,
 * optionally with a port; `*` alone turns proxying off). Lower-case names win over upper-case
 * unless `proxyOptions` says otherwise; `mode: "legacy"` (or `NR_PROXY_MODE=legacy`) keeps Node-RED
 * 2's substring rules.
 */

export interface ProxyOptions {
  mode?: 'strict' | 'legacy';
  lowerCaseOnly?: boolean;
  favourUpperCase?: boolean;
  excludeNpm?: boolean;
  env?: Record<string, string | undefined>;
}

const DEFAULT_PORTS: Record<string, number> = { ftp: 21, gopher: 70, http: 80, https: 443, ws: 80, wss: 443, mqtt: 1880, mqtts: 8883 };

function getEnv(key: string, options: ProxyOptions): string {
  const env = options.env ?? process.env;
  if (options.excludeNpm && key.startsWith('npm_config_')) return '';
  if (options.lowerCaseOnly) return env[key.toLowerCase()] || '';
  if (options.favourUpperCase) return env[key.toUpperCase()] || env[key.toLowerCase()] || '';
  return env[key.toLowerCase()] || env[key.toUpperCase()] || '';
}

function shouldProxy(hostname: string, port: number, options: ProxyOptions): boolean {
  const noProxy = (getEnv('npm_config_no_proxy', options) || getEnv('no_proxy', options)).toLowerCase();
  if (!noProxy) return true;
  if (noProxy === '*') return false;
  return noProxy.split(/[,\s]/).every((entry) => {
    if (!entry) return true;
    const m = /^(.+):(\d+)$/.exec(entry);
    let host = m ? m[1] : entry;
    const entryPort = m ? parseInt(m[2]) : 0;
    if (entryPort && entryPort !== port) return true;
    if (!/^[.*]/.test(host)) return hostname !== host;
    if (host.startsWith('*')) host = host.slice(1);
    return !hostname.endsWith(host);
  });
}

function legacy(url: string, env: Record<string, string | undefined>): string {
  const proxy = env.HTTP_PROXY || env.http_proxy;
  const noProxy = (env.NO_PROXY ?? env.no_proxy)?.split(',');
  if (proxy && !noProxy?.some((n) => url.includes(n.trim()))) return proxy;
  return '';
}

export function getProxyForUrl(url: string, given: ProxyOptions = {}): string {
  const options: ProxyOptions = { mode: 'strict', ...given };
  const override = process.env.NR_PROXY_MODE;
  if (override === 'legacy' || override === 'strict') options.mode = override;
  if (options.mode === 'legacy') return legacy(url, options.env ?? process.env);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '';
  }
  if (!parsed.host) return '';
  const proto = parsed.protocol.split(':', 1)[0];
  const hostname = parsed.host.replace(/:\d*$/, '');
  const port = parseInt(parsed.port) || DEFAULT_PORTS[proto] || 0;
  if (!shouldProxy(hostname, port, options)) return '';
  let proxy = getEnv(`npm_config_${proto}_proxy`, options) || getEnv(`${proto}_proxy`, options) || getEnv('npm_config_proxy', options) || getEnv('all_proxy', options);
  if (proxy && !proxy.includes('://')) proxy = `${proto}://${proxy}`;
  return proxy;
}
