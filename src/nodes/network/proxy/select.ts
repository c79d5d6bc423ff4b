/**
 * The proxy an http request node uses for a URL: its `http proxy` config node when it names one
 * (that node's URL and bypass list replace the environment altogether, as in Node-RED), otherwise
 * `http_proxy` / `https_proxy` / `no_proxy` with `RED.settings.proxyOptions`.
 */
import type { RedApi } from '../../../runtime/red-api-types.js';
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
    if (!proxy) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(proxy);
    } catch {
      return undefined;
    }
    const creds = node?.credentials as { username?: string; password?: string } | undefined;
    const user = creds ? creds.username ?? '' : decodeURIComponent(parsed.username);
    const pass = creds ? creds.password ?? '' : decodeURIComponent(parsed.password);
    return { url: parsed, authorization: user || pass ? `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` : undefined };
  };
}
