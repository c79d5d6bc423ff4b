/**
 * Message counters per node type, for the metrics endpoint. Each live node holds its type's
 * counters object (looked up once, when the node is built), so counting a message is one integer
 * increment on the hot path: no lookup, no allocation. Bounded by the number of node types.
 */
export interface TypeCounters {
  /** Messages the node sent (one per delivery to a wired node). */
  sent: number;
  /** Messages delivered to the node's input handlers. */
  received: number;
  /** Errors the node reported (node.error). */
  errors: number;
}

export class MessageStats {
  private readonly byType = new Map<string, TypeCounters>();
  /** When counting is off every node shares this one, never read. */
  private readonly discard: TypeCounters = { sent: 0, received: 0, errors: 0 };

  constructor(private readonly enabled: boolean) {}

  forType(type: string): TypeCounters {
    if (!this.enabled) return this.discard;
    let counters = this.byType.get(type);
    if (counters === undefined) {
      counters = { sent: 0, received: 0, errors: 0 };
      this.byType.set(type, counters);
    }
    return counters;
  }

  entries(): IterableIterator<[string, TypeCounters]> {
    return this.byType.entries();
  }
}
