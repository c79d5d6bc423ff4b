import type { Logger } from '../base/log.js';
import type { ClaimedMessage, QueueStore } from '../storage/queue-contract.js';

/** What a consumer's handler decides about one message. */
export type Outcome = { ack: true } | { ack: false; retryInMs: number };

export interface ConsumerOptions {
  /** Messages handled at once by this consumer. */
  concurrency: number;
  /** How long a claim holds without renewal: a dead instance's messages are handed out again after it. */
  leaseMs: number;
  /** How often to look for messages that became available without a notification (back-offs, lapsed claims). */
  pollMs: number;
}

/**
 * Takes messages off one queue and hands each to `handle`, at most `concurrency` at a time. It
 * claims when woken (an enqueue anywhere in the cluster, a slot freed) and every `pollMs`; renews
 * its claims while the handler works; acknowledges or gives back by the handler's outcome. Stopping
 * gives back what the handler has not finished, so a deploy loses nothing.
 */
export class Consumer {
  private readonly inFlight = new Map<number, ClaimedMessage>();
  private claiming = false;
  private again = false;
  private stopped = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly unlisten: () => void;
  private settled: (() => void) | undefined;
  private acks: number[] = [];
  /** Slots promised to an enqueue's hand-off under way. */
  private reserved = 0;
  /** The claim under way, if any: stopping waits for it, so what it brings is given back, not run. */
  private claim: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: QueueStore,
    readonly queue: string,
    private readonly options: ConsumerOptions,
    private readonly handle: (message: ClaimedMessage) => Promise<Outcome>,
    private readonly log: Logger,
  ) {
    this.unlisten = store.onAvailable((name) => {
      if (name === queue || name === '') this.wake();
    });
    const poll = setInterval(() => this.wake(), options.pollMs);
    const renew = setInterval(() => this.renew(), Math.max(1, Math.floor(options.leaseMs / 3)));
    poll.unref();
    renew.unref();
    this.timers.push(poll, renew);
    this.wake();
  }

  get busy(): number {
    return this.inFlight.size;
  }

  /**
   * Reserves the free slots for messages claimed as they are stored on this instance
   * (QueueStore.enqueue's hand-off); `take` runs what the store handed off and frees the rest.
   */
  handOff(wanted: number): { max: number; take(messages: ClaimedMessage[]): void } | undefined {
    const max = Math.min(wanted, this.options.concurrency - this.inFlight.size - this.reserved);
    if (this.stopped || max <= 0) return undefined;
    this.reserved += max;
    return {
      max,
      take: (messages) => {
        this.reserved -= max;
        if (this.stopped) {
          void this.giveBack(messages.map((m) => m.seq));
          return;
        }
        for (const m of messages) this.run(m);
        if (this.again) this.wake();
      },
    };
  }

  /** Claims as many messages as there are free slots; again after, if more may be waiting. */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    const free = this.options.concurrency - this.inFlight.size - this.reserved;
    if (free <= 0) {
      // A hand-off holds the slots: it looks again once it has freed what it did not use.
      if (this.reserved > 0) this.again = true;
      return;
    }
    this.claiming = true;
    this.again = false;
    this.claim = this.store.claim(this.queue, free, this.options.leaseMs).then(
      async (messages) => {
        this.claiming = false;
        if (this.stopped) return this.giveBack(messages.map((m) => m.seq));
        for (const m of messages) this.run(m);
        if (this.again || messages.length === free) this.wake();
      },
      (err: unknown) => {
        this.claiming = false;
        this.log.warn({ queue: this.queue, err: (err as Error).message }, 'Taking messages off a queue failed; retrying');
      },
    );
  }

  /**
   * Stops taking messages; waits up to `graceMs` for those in hand, then gives the rest back to be
   * handed out again (flagged as redeliveries).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    this.unlisten();
    for (const t of this.timers) clearInterval(t);
    await this.claim;
    if (this.inFlight.size > 0 || this.acks.length > 0) {
      await new Promise<void>((resolve) => {
        this.settled = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    const left = [...this.inFlight.keys()];
    this.inFlight.clear();
    await this.giveBack(left);
  }

  private async giveBack(seqs: number[]): Promise<void> {
    await Promise.all(seqs.map((seq) => this.store.retry(this.queue, seq, 0).catch(() => undefined)));
  }

  private run(message: ClaimedMessage): void {
    this.inFlight.set(message.seq, message);
    void this.handle(message)
      .catch((err: unknown): Outcome => {
        this.log.error({ queue: this.queue, err }, 'A queue message handler failed');
        return { ack: false, retryInMs: 0 };
      })
      .then((outcome) => this.finish(message, outcome));
  }

  private finish(message: ClaimedMessage, outcome: Outcome): void {
    // Given back by stop() already: whoever claims it next decides.
    if (!this.inFlight.delete(message.seq)) return;
    if (outcome.ack) {
      // Acknowledgements of one turn of the event loop go to the store together.
      this.acks.push(message.seq);
      if (this.acks.length === 1) setImmediate(() => this.flushAcks());
      return;
    }
    this.store.retry(this.queue, message.seq, outcome.retryInMs).then(() => this.settle(), (err: unknown) => this.failed(err));
  }

  private flushAcks(): void {
    const seqs = this.acks;
    this.acks = [];
    this.store.ack(this.queue, seqs).then(() => this.settle(), (err: unknown) => this.failed(err));
  }

  /** The claim lapses and the message comes back: a duplicate, never a loss. */
  private failed(err: unknown): void {
    this.log.warn({ queue: this.queue, err: (err as Error).message }, 'Acknowledging a queue message failed; it will be handed out again');
    this.settle();
  }

  /** A message is done with: the next of its key may be claimable now, and a slot is free. */
  private settle(): void {
    if (this.stopped) {
      if (this.inFlight.size === 0 && this.acks.length === 0) this.settled?.();
    } else this.wake();
  }

  private renew(): void {
    if (this.inFlight.size === 0) return;
    this.store.renew(this.queue, [...this.inFlight.keys()], this.options.leaseMs).catch((err: unknown) => {
      this.log.warn({ queue: this.queue, err: (err as Error).message }, 'Renewing queue claims failed');
    });
  }
}
