import { randomUUID } from 'node:crypto';
import type { Msg, NodeConfig, RedApi } from '../../runtime/red-api/red-api-types.js';
import { decodeMessage, encodeMessage, QueueMessageError } from '../../queues/codec.js';
import type { QueueService } from '../../queues/queue-service.js';
import type { ClaimedMessage } from '../../storage/queue-contract.js';
import type { Outcome } from '../../queues/consumer.js';
import { CompletionTracker } from './tracker.js';
import { badQueueName } from '../../queues/names.js';

const DEFAULT_KEY = 'topic';
/** A queue in's empty `key`: its queue's messages are stored without a key, so none waits for another. */
const NO_KEY = '';
const DEFAULT_TIMEOUT_S = 60;
/** How long a stopping queue in waits for the messages in hand: within Node-RED's default close timeout (15 s). */
const CLOSE_GRACE_MS = 10_000;
/** Back-off after a failed attempt: `queues.backoffMs` (1 s), doubled per attempt, at most a minute. */
const backoffMs = (first: number, attempts: number) => Math.min(60_000, first * 2 ** Math.max(0, attempts - 1));

function positiveInt(value: unknown, fallback: number): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * The queue nodes: `queue out` stores each message on a durable queue and passes it on once it is
 * stored; `queue in` takes messages off and acknowledges each when the flow after it has finished
 * with it (src/nodes/queue/tracker.ts). See README, "Queue wires". `primaryOnly` says whether a
 * node's context scope (`nodeId:flowId`) is on a primary-only tab: what such a `queue out` stores
 * is fenced by the primary's lease.
 */
export function queueNodes(service: QueueService, primaryOnly: (scope: string) => boolean = () => false) {
  return (RED: RedApi) => {
    const tracker = new CompletionTracker(RED.hooks, RED.events);
    /** The key property each queue's queue in nodes order by: queue out computes keys when it stores. */
    const keyProperties = new Map<string, Set<string>>();
    /** Queues whose queue in nodes a deploy stopped: unless one of that name runs after it, say what they still hold. */
    const stopped = new Set<string>();
    RED.events.on('flows:started', () => {
      if (stopped.size === 0) return;
      const names = [...stopped];
      stopped.clear();
      service.unattended(names).then(
        (left) => {
          for (const q of left) {
            RED.log.warn(`Queue "${q.name}" holds ${q.depth} messages and no queue in node takes from it any more (renamed or removed?): they wait until a queue in node of that name runs, or DELETE /queues/${encodeURIComponent(q.name)}/messages purges them`);
          }
        },
        (err: unknown) => RED.log.warn(`Could not check the queues a deploy left without a queue in node: ${(err as Error).message}`),
      );
    });

    class QueueOutNode extends RED.nodes.Node {
      constructor(config: NodeConfig) {
        super(config);
        const queue = config.queue;
        const bad = badQueueName(queue);
        if (bad) {
          this.status({ fill: 'red', shape: 'ring', text: 'no queue' });
          this.on('input', (msg, _send, done) => done(new QueueMessageError('queue_name_invalid', `queue out: ${bad}`)));
          return;
        }
        const name = queue as string;
        const settings = service.settings;
        let open = true;
        const bound = {
          maxLength: Math.min(positiveInt(config.maxLength, settings.maxLength), settings.maxLength),
          maxBytes: settings.maxBytes,
          wait: config.whenFull === 'wait',
          open: () => open,
        };
        this.on('close', () => {
          open = false;
        });
        this.on('input', (msg, send, done) => {
          const keyProperty = keyProperties.get(name)?.values().next().value ?? DEFAULT_KEY;
          const keyValue = keyProperty === NO_KEY ? undefined : RED.util.getMessageProperty(msg, keyProperty);
          let body: string;
          try {
            body = encodeMessage(msg, settings.maxMessageBytes);
          } catch (e) {
            done(e);
            return;
          }
          const key = keyValue === undefined || keyValue === null ? null : typeof keyValue === 'string' ? keyValue : JSON.stringify(keyValue);
          service.put(name, { id: randomUUID(), key, body }, bound, primaryOnly(`${this.id}:${this.z}`)).then(
            () => {
              send(msg);
              done();
            },
            (e: unknown) => done(e),
          );
        });
      }
    }

    class QueueInNode extends RED.nodes.Node {
      constructor(config: NodeConfig) {
        super(config);
        const bad = badQueueName(config.queue);
        if (bad) {
          this.status({ fill: 'red', shape: 'ring', text: 'no queue' });
          this.error(`queue in: ${bad}`);
          return;
        }
        const name = config.queue as string;
        // Only a node without the property orders by topic: an empty field, as the editor shows it, means no order.
        const keyProperty = typeof config.key === 'string' ? config.key.trim() : DEFAULT_KEY;
        const keys = keyProperties.get(name) ?? new Set<string>();
        keys.add(keyProperty);
        keyProperties.set(name, keys);
        const maxAttempts = positiveInt(config.maxAttempts, 5);
        const timeoutMs = positiveInt(config.timeout, DEFAULT_TIMEOUT_S) * 1000;
        const release = tracker.use();

        const handle = async (claimed: ClaimedMessage): Promise<Outcome> => {
          let msg: Msg;
          try {
            msg = decodeMessage(claimed.body) as Msg;
          } catch (e) {
            // Only Runnel writes bodies; one that does not parse cannot get better by retrying.
            this.error(`queue in: message ${claimed.id} on "${name}" is unreadable and was removed: ${(e as Error).message}`);
            return { ack: true };
          }
          msg._msgid = claimed.id;
          msg.redelivered = claimed.attempts > 1;
          msg.attempts = claimed.attempts;
          const dead = claimed.attempts > maxAttempts;
          if (dead) service.countDead(name);
          let timer: NodeJS.Timeout | undefined;
          const outcome = await Promise.race([
            tracker.follow(claimed.id, () => this.send(dead ? [null, msg] : [msg, null])),
            new Promise<'timeout'>((resolve) => {
              timer = setTimeout(() => resolve('timeout'), timeoutMs);
            }),
          ]);
          clearTimeout(timer);
          if (outcome === 'timeout') {
            tracker.forget(claimed.id);
            this.warn(`queue in: message ${claimed.id} on "${name}" was not finished within ${timeoutMs / 1000} s; it will be handed out again`);
            return { ack: false, retryInMs: backoffMs(service.settings.backoffMs, claimed.attempts) };
          }
          if (outcome.stranded) {
            this.warn(`queue in: message ${claimed.id} on "${name}" was in a node a deploy stopped; it will be handed out again`);
            return { ack: false, retryInMs: 0 };
          }
          // A dead letter is removed once its own flow has finished with it, failed or not.
          if (outcome.error === undefined || dead) return { ack: true };
          return { ack: false, retryInMs: backoffMs(service.settings.backoffMs, claimed.attempts) };
        };

        const consumer = service.consume(name, positiveInt(config.concurrency, 1), handle);
        this.on('close', async (_removed: boolean, done: () => void) => {
          keys.delete(keyProperty);
          if (keys.size === 0 && keyProperties.get(name) === keys) keyProperties.delete(name);
          // Messages not finished by then are given back and handed out again.
          await consumer.stop(CLOSE_GRACE_MS);
          stopped.add(name);
          release();
          done();
        });
      }
    }

    RED.nodes.registerType('queue out', QueueOutNode);
    RED.nodes.registerType('queue in', QueueInNode);
  };
}
