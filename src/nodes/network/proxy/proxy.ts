/** `http proxy`: a proxy URL, hosts that bypass it, and its user and password, for the http request node. */
import type { NodeConfig, NodeInstance, RedApi } from '../../../runtime/red-api/red-api-types.js';

export interface HttpProxyNode extends NodeInstance {
  url: string;
  noproxy: string[];
}

export default function (RED: RedApi) {
  function HttpProxy(this: HttpProxyNode, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    this.url = String(config.url ?? '');
    this.noproxy = Array.isArray(config.noproxy) ? (config.noproxy as string[]) : [];
  }
  RED.nodes.registerType('http proxy', HttpProxy as never, {
    credentials: { username: { type: 'text' }, password: { type: 'password' } },
  });
}
