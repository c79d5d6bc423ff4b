import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deploy, type Conf } from '../helpers/deploy.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';

/**
 * The queue nodes across deploys and against a consumer that never finishes, on one instance
 * (file storage): a deploy that replaces the flow after `queue in` loses nothing, a renamed queue
 * keeps what it holds and says so, and a stalled flow holds no more than its concurrency.
 */

const n = (id: string, type: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({ id, type, z: 't1', name: id, x: 100, y: 100, wires, ...extra });
const TAB: Conf = { id: 't1', type: 'tab', label: 'queues' };
/** A function that keeps every message and never finishes it. */
const STUCK = 'if (false) node.done(); return null;';

interface Listed {
  name: string;
  depth: number;
  inFlight: number;
  consumers: number;
}

describe('queue nodes across deploys', { timeout: 120_000 }, () => {
  let server: TestServer;
  let capture: Capture;

  before(async () => {
    server = await startServer({ queues: { pollMs: 20, backoffMs: 20 } });
    capture = installCapture(server);
  });
  after(() => server?.dispose());

  const put = (node: string, count: number, from = 0) => {
    const queueOut = server.instance.runtime.services.nodes.get(node);
    assert.ok(queueOut, `${node} is running`);
    for (let i = from; i < from + count; i++) queueOut.receive({ payload: { n: i } });
  };
  const queue = async (name: string): Promise<Listed | undefined> =>
    ((await request(server.at('queues'))).body.queues as Listed[]).find((q) => q.name === name);
  const numbers = (name: string) => capture.of(name).map((m) => m.payload.n as number).sort((a, b) => a - b);

  it('hands the messages a replaced node held out again at once, flagged as redeliveries', async () => {
    // Timeout 30 s: without the deploy noticing, the held messages would come back only then.
    const flow = (after: Conf) => [TAB, n('out', 'queue out', { queue: 'swap' }), n('in', 'queue in', { queue: 'swap', key: '', concurrency: 3, timeout: 30 }, [['work'], []]), after, n('got', 'test-capture')];
    await deploy(server, flow(n('work', 'function', { func: STUCK }, [['got']])));
    put('out', 5);
    await eventually(async () => (await queue('swap'))?.inFlight === 3);
    await deploy(server, flow(n('work', 'function', { func: 'return msg;' }, [['got']])), { type: 'nodes' });
    const got = await capture.waitFor('got', 5, 10_000);
    assert.deepEqual(numbers('got'), [0, 1, 2, 3, 4], 'each message once');
    assert.deepEqual(got.filter((m) => m.redelivered).map((m) => m.payload.n).sort(), [0, 1, 2], 'the three in hand at the deploy, redelivered');
    await eventually(async () => (await queue('swap'))?.depth === 0);
  });

  it('finishes the messages in hand before a full deploy replaces the flow after queue in', async () => {
    const flow = (after: Conf[]) => [TAB, n('out', 'queue out', { queue: 'full' }), n('in', 'queue in', { queue: 'full', key: '', concurrency: 3 }, [['work'], []]), ...after];
    await deploy(server, flow([n('work', 'function', { func: 'setTimeout(() => { node.send(msg); node.done(); }, 200); return null;' }, [['old']]), n('old', 'test-capture')]));
    put('out', 3);
    await eventually(async () => (await queue('full'))?.inFlight === 3);
    await deploy(server, flow([n('work', 'function', { func: 'return msg;' }, [['new']]), n('new', 'test-capture')]));
    put('out', 2, 3);
    await capture.waitFor('new', 2);
    assert.deepEqual(numbers('old'), [0, 1, 2], 'finished by the flow they were in');
    assert.deepEqual(numbers('new'), [3, 4]);
    assert.ok(capture.of('old').every((m) => !m.redelivered));
  });

  it('keeps a renamed queue\'s messages: GET /queues lists it without a consumer and the deploy warns, naming it', async () => {
    const flow = (name: string) => [
      TAB,
      n('out', 'queue out', { queue: name }),
      n('in', 'queue in', { queue: name, key: '' }, [['slow'], []]),
      n('slow', 'function', { func: 'setTimeout(() => { node.send(msg); node.done(); }, 20); return null;' }, [['handled']]),
      n('handled', 'test-capture'),
    ];
    await deploy(server, flow('before'));
    put('out', 20);
    await capture.waitFor('handled', 1);
    await deploy(server, flow('after'), { type: 'nodes' });
    const left = await eventually(async () => {
      const q = await queue('before');
      return q && q.inFlight === 0 ? q : undefined;
    });
    assert.equal(left!.consumers, 0);
    assert.ok(left!.depth > 0, 'the rest of the messages wait in the old queue');
    assert.equal(left!.depth + capture.of('handled').length, 20, 'nothing dropped');
    const warning = await eventually(() => server.logs.find((l) => l.includes('Queue \\"before\\" holds')));
    assert.match(warning!, new RegExp(`holds ${left!.depth} messages and no queue in node takes from it`));
    assert.match(warning!, /DELETE \/queues\/before\/messages/);
    assert.equal((await request(server.at('queues/before/messages'), { method: 'DELETE' })).body.purged, left!.depth);
  });

  it('holds no more messages than its concurrency while the flow after queue in never finishes', async () => {
    const flow = (work: string) => [TAB, n('out', 'queue out', { queue: 'stall' }), n('in', 'queue in', { queue: 'stall', key: '', concurrency: 3 }, [['work'], []]), n('work', 'function', { func: work }, [['freed']]), n('freed', 'test-capture')];
    await deploy(server, flow(STUCK));
    put('out', 30);
    await eventually(async () => (await queue('stall'))?.inFlight === 3);
    // Each enqueue wakes the consumer: it claims nothing while its three are in hand.
    put('out', 30, 30);
    await eventually(async () => (await queue('stall'))?.depth === 60);
    const stalled = await queue('stall');
    assert.equal(stalled!.inFlight, 3, 'nothing read ahead');
    await deploy(server, flow('return msg;'), { type: 'nodes' });
    await capture.waitFor('freed', 60);
    assert.deepEqual(numbers('freed'), Array.from({ length: 60 }, (_, i) => i));
  });
});
