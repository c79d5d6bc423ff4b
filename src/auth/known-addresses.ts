const PER_USER = 16;
const KEEP_MS = 30 * 24 * 3600_000;

/**
 * The client addresses each user has recently logged in from (OWASP's "device cookie" idea, keyed
 * by address). A login from one of them is very likely the owner, so it skips the line of an
 * attacker's guesses from fresh addresses. Only successful logins add to it, so it holds at most
 * `PER_USER` addresses per configured user; it lives in memory and starts empty at each start,
 * when the addresses of the users' live login sessions (stored with them) stand in for it.
 */
export class KnownAddresses {
  private readonly byUser = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  remember(username: string, address: string): void {
    const seen = this.byUser.get(username) ?? new Map<string, number>();
    // Re-inserting keeps the Map in order of last use, so the first entry is the one to drop.
    seen.delete(address);
    seen.set(address, this.now());
    if (seen.size > PER_USER) seen.delete(seen.keys().next().value!);
    this.byUser.set(username, seen);
  }

  has(username: string, address: string): boolean {
    const at = this.byUser.get(username)?.get(address);
    return at !== undefined && this.now() - at < KEEP_MS;
  }
}
