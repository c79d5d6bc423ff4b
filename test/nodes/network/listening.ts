import { deploy, type Conf, type DeployOptions } from '../../helpers/deploy.js';
import { ADDRESS_IN_USE, withFreePorts } from '../../helpers/ports.js';
import { eventually, type TestServer } from '../../helpers/server.js';

/** The log line of a tcp in / tcp out server or a udp in node listening on `port`. */
const listening = (port: number) => new RegExp(`(listening on port |udp listener at \\S+:)${port}\\b`);

/**
 * Deploys a flow whose nodes listen on ports their configuration names (tcp in and tcp out as
 * servers, udp in) on `count` ports that were free a moment ago, and waits until each listens.
 * Another process may take a port in between: the node then logs EADDRINUSE and the flow is
 * deployed again on new ports (withFreePorts), so the race costs a retry, not the test.
 */
export async function deployListening(
  server: TestServer, count: number, flow: (ports: number[]) => Conf[], options: DeployOptions = {}, protocol: 'tcp' | 'udp4' = 'tcp',
): Promise<number[]> {
  return withFreePorts(count, async (ports) => {
    const seen = server.logs.length;
    await deploy(server, flow(ports), options);
    const taken = await eventually(() => {
      const logs = server.logs.slice(seen).join('\n');
      if (ADDRESS_IN_USE.test(logs)) return logs;
      return ports.every((p) => listening(p).test(logs)) && 'none';
    }, 30_000);
    if (taken !== 'none') throw new Error(`a port was taken before the node listened: ${taken}`);
    return ports;
  }, protocol);
}
