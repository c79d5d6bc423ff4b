/**
 * The proxy an http request node uses for a URL: its `http proxy` config node when it names one
 * (that node's URL and bypass list replace the environment altogether, as in Node-RED), otherwise
 * `http_proxy` / `https_proxy` / `no_proxy` with `RED.settings.proxyOptions`.
 */
import type { RedApi } from '../../../runtime/red-api/red-api-types.js';
import type { Proxy } from './tunnel.js';
import { getProxyForUrl, type ProxyOptions } from './lookup.js';
import type { HttpProxyNode } from './proxy.js';

export function proxySelector(RED: RedApi, config: { proxy?: unknown; [key: string]: unknown }): (url: string) => Proxy | undefined {
  const options: ProxyOptions = { ...(RED.settings.proxyOptions as ProxyOptions | undefined) };
  let node: HttpProxyNode | null = null;
  if (config.proxy) {
    node = RED.nodes.getNode(String(config.proxy)) as HttpProxyNode | null;
    options.env = { no_proxy: (node?.noproxy ?? []).join(','), http_proxy: node?.url, https_proxy: node?.url };
  }
  return (url) => {
    const proxy = getProxyForUrl(url, options);
    return proxy ? parseProxy(proxy, node?.credentials as ProxyCredentials | undefined) : undefined;
  };
}

type ProxyCredentials = { username?: string; password?: string };

/** A proxy URL as the tunnel takes it; `creds` (an http proxy node's) replace the URL's user and password. */
export function parseProxy(proxy: string, creds?: ProxyCredentials): Proxy | undefined {
  let parsed: URL;
  try {
    parsed = new URL(proxy);
  } catch {
    return undefined;
  }
  const user = creds ? creds.username ?? '' : decodeURIComponent(parsed.username);
  const pass = creds ? creds.password ?? '' : decodeURIComponent(parsed.password);
  return { url: parsed, authorization: user || pass ? `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` : undefined };
}
