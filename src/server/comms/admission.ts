/**
 * Bounds on the /comms sockets that have not authenticated yet. Each one holds a connection of
 * `httpServerLimits.maxConnections`, and 900 that never said who they were refused every other
 * client, `/health` included. They are counted per client address and in all, the total kept to a
 * share of the connection cap so the rest stays free for `/health` and the admin API.
 *
 * Nothing tells an admin's socket from an attacker's before its token arrives, so a new socket is
 * never refused: at a bound the oldest waiting one (of that address, else of all) is closed. The
 * editor sends its token as soon as the socket opens, so it authenticates long before a flood of
 * new sockets could push it out.
 */
export class PendingAdmission<K> {
  /** In the order they came, so the first is the oldest. */
  private readonly waiting = new Map<K, { address: string; evict: () => void }>();
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly perAddress: number, private readonly overall: number) {}

  /** Counts `key` as waiting; `evict` closes it should it be pushed out. */
  admit(key: K, address: string, evict: () => void): void {
    if ((this.byAddress.get(address) ?? 0) >= this.perAddress) this.evictOldest((a) => a === address);
    else if (this.waiting.size >= this.overall) this.evictOldest(() => true);
    this.waiting.set(key, { address, evict });
    this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
  }

  /** `key` authenticated or closed. */
  release(key: K): void {
    const entry = this.waiting.get(key);
    if (!entry) return;
    this.waiting.delete(key);
    const held = this.byAddress.get(entry.address) ?? 1;
    if (held <= 1) this.byAddress.delete(entry.address);
    else this.byAddress.set(entry.address, held - 1);
  }

  private evictOldest(matches: (address: string) => boolean): void {
    for (const [key, entry] of this.waiting) {
      if (!matches(entry.address)) continue;
      this.release(key);
      entry.evict();
      return;
    }
  }
}
