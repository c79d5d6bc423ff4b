import type { Held } from './held.js';

interface Group {
  count: number | undefined;
  items: Held[];
}

/**
 * Messages of sequences (msg.parts), held per `parts.id` until as many as the sequence's count
 * have arrived. Map order keeps sequences oldest first, so the oldest can go at a buffer limit.
 */
export class SequenceGroups {
  private readonly groups = new Map<unknown, Group>();
  /** Messages held, over all sequences. */
  size = 0;

  /**
   * `latestCountWins`: a message's `parts.count` replaces the one already known (the sort node)
   * rather than only filling it in (join's reduce mode, batch).
   */
  constructor(private readonly latestCountWins: boolean) {}

  /** Holds `item` in sequence `id`; true when that sequence is now complete. */
  add(id: unknown, item: Held, count: unknown): boolean {
    let group = this.groups.get(id);
    if (!group) {
      group = { count: undefined, items: [] };
      this.groups.set(id, group);
    }
    group.items.push(item);
    this.size++;
    if (count != null && (group.count === undefined || this.latestCountWins)) group.count = count as number;
    return group.items.length === group.count;
  }

  /** Removes sequence `id`, returning its messages in arrival order. */
  take(id: unknown): Held[] {
    const group = this.groups.get(id);
    if (!group) return [];
    this.groups.delete(id);
    this.size -= group.items.length;
    return group.items;
  }

  /** The oldest sequence's messages, left held, when that sequence is complete. */
  oldestComplete(): Held[] | undefined {
    const oldest = this.groups.values().next().value;
    return oldest !== undefined && oldest.items.length === oldest.count ? oldest.items : undefined;
  }

  takeOldest(): Held[] {
    const oldest = this.groups.keys().next();
    return oldest.done ? [] : this.take(oldest.value);
  }

  /** Removes every sequence, returning all their messages. */
  drain(): Held[] {
    const all: Held[] = [];
    for (const group of this.groups.values()) all.push(...group.items);
    this.groups.clear();
    this.size = 0;
    return all;
  }
}
