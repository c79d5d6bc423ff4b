import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';

export type Conf = Record<string, unknown>;

/** A flow node on tab `t1`, named after its id so captured messages and errors are easy to attribute. */
export const node = (id: string, type: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({
  id, type, z: 't1', name: id, x: 100, y: 100, wires, ...extra,
});

/** Deploys a full configuration through the admin API, as an editor would. */
export async function deploy(server: TestServer, flows: Conf[]): Promise<void> {
  const r = await request(server.at('flows'), { method: 'POST', json: flows, headers: { 'Runtime-API-Version': 'v1' } });
  assert.equal(r.status, 204, r.text);
}


/** Hands a message straight to a running node, as a wire would. */
export const receiver = (current: () => TestServer) => (id: string, msg: Record<string, unknown>): void => {
  const target = current().instance.runtime.services.nodes.get(id);
  assert.ok(target, `node ${id} is running`);
  target.receive(msg);
};

export interface FlowSuite {
  readonly server: TestServer;
  readonly capture: Capture;
  receive(id: string, msg: Record<string, unknown>): void;
}

/**
 * The common set-up of a node test file: a server with the capture type, the given flows deployed
 * before the tests and the server disposed after them. Call it inside `describe`.
 */
export function flowSuite(flows: (server: TestServer) => Conf[], settings: Record<string, unknown> = {}): FlowSuite {
  let server: TestServer | undefined;
  let capture: Capture | undefined;
  before(async () => {
    server = await startServer(settings);
    capture = installCapture(server);
    await deploy(server, flows(server));
  });
  after(() => server?.dispose());
  return {
    get server() {
      return server!;
    },
    get capture() {
      return capture!;
    },
    receive: (id, msg) => receiver(() => server!)(id, msg),
  };
}
