import { RunnelError } from '../../base/errors.js';
import type { QueueInfo, QueueService } from '../../queues/queue-service.js';
import type { Logger } from '../../base/log.js';
import type { Caller } from './caller.js';
import { badQueueName } from '../../queues/names.js';

export type { QueueInfo };

/** The durable queues of the queue nodes (README, "Queue wires"). */
export interface QueuesApi {
  /** GET /queues: every queue holding messages or used by a queue node here, with depth and rates. */
  list(): Promise<QueueInfo[]>;
  /** DELETE /queues/:name/messages: removes every message of the queue, in flight or not; 404 for a queue nobody knows. */
  purge(name: string, caller: Caller): Promise<{ purged: number }>;
}

export function queuesApi(service: QueueService, log: Logger): QueuesApi {
  return {
    list: () => service.list(),
    async purge(name, caller) {
      const bad = badQueueName(name);
      if (bad) throw new RunnelError('invalid_request', `Cannot purge: ${bad}`);
      if (!(await service.list()).some((q) => q.name === name)) throw new RunnelError('not_found', `No queue named ${JSON.stringify(name)}`);
      const purged = await service.purge(name);
      log.info({ audit: true, queue: name, purged, user: caller.user, ip: caller.ip }, `Queue "${name}" purged: ${purged} messages removed`);
      return { purged };
    },
  };
}
