/**
 * How a message is stored on a queue: JSON, with Buffers as Node-RED encodes them
 * (`{"type":"Buffer","data":[...]}`, turned back into Buffers when the message is taken off) and
 * Dates as ISO strings. What JSON cannot carry is refused, not dropped: a function, a BigInt, a
 * Symbol or a circular reference fails the message. An `http in` request's live `req` and `res`
 * are left out: they belong to the process that received the request (the flow that answers it
 * keeps them).
 */

/** An error the `queue out` node reports as the message's error, where a catch node can take it. */
export class QueueMessageError extends Error {
  constructor(readonly code: 'queue_message_unserialisable' | 'queue_message_too_large' | 'queue_full' | 'queue_closed' | 'queue_name_invalid', message: string) {
    super(message);
    this.name = 'QueueMessageError';
  }
}

const LEFT_OUT = new Set(['req', 'res']);

export function encodeMessage(msg: Record<string, unknown>, maxBytes: number): string {
  let text: string;
  try {
    text = JSON.stringify(msg, function (this: unknown, key, value: unknown) {
      if (this === msg && LEFT_OUT.has(key)) return undefined;
      if (typeof value === 'function' || typeof value === 'symbol') throw new TypeError(`msg.${key} is a ${typeof value}`);
      return value;
    });
  } catch (e) {
    throw new QueueMessageError('queue_message_unserialisable', `The message cannot be stored on a queue (JSON): ${(e as Error).message}`);
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) throw new QueueMessageError('queue_message_too_large', `The message is ${bytes} bytes as JSON, over the queue's limit of ${maxBytes} (queues.maxMessageBytes)`);
  return text;
}

export function decodeMessage(body: string): Record<string, unknown> {
  return JSON.parse(body, (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer' && Array.isArray((value as { data?: unknown }).data)) {
      const keys = Object.keys(value);
      if (keys.length === 2) return Buffer.from((value as { data: number[] }).data);
    }
    return value;
  }) as Record<string, unknown>;
}
