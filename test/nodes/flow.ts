import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { deploy, type Conf } from '../helpers/deploy.js';

export type { Conf };

/** A flow node on tab `t1`, named after its id so captured messages and errors are easy to attribute. */
export const node = (id: string, type: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({
  id, type, z: 't1', name: id, x: 100, y: 100, wires, ...extra,
});

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
 * before the tests and the server disposed after them. Call it inside `describe`. Settings that
 * depend on an earlier `before` hook (a temp dir) are given as a function, read when the server starts.
 */
export function flowSuite(flows: (server: TestServer) => Conf[], settings: Conf | (() => Conf) = {}): FlowSuite {
  let server: TestServer | undefined;
  let capture: Capture | undefined;
  before(async () => {
    server = await startServer(typeof settings === 'function' ? settings() : settings);
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
