import { OAuthError } from './oauth-error.js';

/** Thrown to a waiting login whose client went away: it never checks its password, and nobody reads the answer. */
export class LoginAbandoned extends OAuthError {
  constructor() {
    super(400, 'invalid_request', 'The client went away before its login was checked');
  }
}

interface Waiter {
  /** Lower goes first: the failures its address has recently had, or less for an address the user is known to log in from. */
  rank: number;
  seq: number;
  go: () => void;
  fail: (e: unknown) => void;
}

/**
 * Lets the logins of a username under attack through one per delay. Once a username has had
 * many failures (from any addresses), each login waits for a slot; a slot opens `delayOf(user)`
 * after the last one and goes to the waiting login whose address has the fewest recent failures.
 * So guesses spread over many addresses still slow down, while the owner, whose address has not
 * been failing, waits at most one delay however many of an attacker's attempts are queued: they
 * go after it. The caller ranks logins from the user's known addresses first, so an owner on such an
 * address is not queued behind guesses from fresh ones either. A login whose client leaves is dropped from the line at once.
 */
export class LoginGate {
  private readonly lines = new Map<string, Waiter[]>();
  private seq = 0;

  /** `sleep` waits out a delay (a test's clock passes it at once). */
  constructor(
    private readonly delayOf: (username: string) => Promise<number>,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  /**
   * Resolves when this login may check its password; rejects with LoginAbandoned when `signal`
   * aborts first. `rank` is asked only when the login has to wait.
   */
  async enter(username: string, rank: () => Promise<number>, signal?: AbortSignal): Promise<void> {
    const key = username.slice(0, 256);
    // Asked again after reading the counters: another login may have opened a line meanwhile.
    if (!this.lines.has(key) && (await this.delayOf(username)) === 0 && !this.lines.has(key)) return;
    const myRank = await rank();
    if (signal?.aborted) throw new LoginAbandoned();
    const existing = this.lines.get(key);
    const line = existing ?? [];
    const turn = new Promise<void>((resolve, reject) => {
      const leave = () => {
        const at = line.indexOf(waiter);
        if (at >= 0) line.splice(at, 1);
        reject(new LoginAbandoned());
      };
      const waiter: Waiter = {
        rank: myRank,
        seq: this.seq++,
        go: () => {
          signal?.removeEventListener('abort', leave);
          resolve();
        },
        fail: (e) => {
          signal?.removeEventListener('abort', leave);
          reject(e);
        },
      };
      line.push(waiter);
      signal?.addEventListener('abort', leave, { once: true });
    });
    if (!existing) {
      this.lines.set(key, line);
      void this.serve(key, username, line);
    }
    await turn;
  }

  /**
   * Refuses the waiting login whose address failed most (the latest of them) with `error`, never
   * one from an address known to the user; false when there is none.
   */
  shed(error: Error, knownRank: number): boolean {
    let worst: { line: Waiter[]; at: number } | undefined;
    for (const line of this.lines.values()) {
      line.forEach((w, at) => {
        const current = worst && worst.line[worst.at];
        if (w.rank > knownRank && (!current || w.rank > current.rank || (w.rank === current.rank && w.seq > current.seq))) worst = { line, at };
      });
    }
    if (!worst) return false;
    worst.line.splice(worst.at, 1)[0].fail(error);
    return true;
  }

  /** Opens a slot per delay until nobody waits. */
  private async serve(key: string, username: string, line: Waiter[]): Promise<void> {
    try {
      // The first slot too waits a delay: the line exists because one is due.
      while (line.length > 0) {
        const pause = await this.delayOf(username);
        if (pause > 0) await this.sleep(pause);
        if (line.length === 0) break;
        let best = 0;
        for (let i = 1; i < line.length; i++) if (line[i].rank < line[best].rank || (line[i].rank === line[best].rank && line[i].seq < line[best].seq)) best = i;
        line.splice(best, 1)[0].go();
      }
    } catch (e) {
      for (const waiter of line.splice(0)) waiter.fail(e);
    } finally {
      this.lines.delete(key);
    }
  }
}
