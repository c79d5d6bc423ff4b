import type { Server } from 'node:http';

/**
 * The bytes a server is receiving into memory, in all: request bodies (counted by their announced
 * length) and the messages websocket nodes are assembling. One budget, `httpServerLimits.bodyBufferTotal`,
 * so neither kind can take what the other was bounded to leave free.
 */
export class ReceiveBudget {
  private held = 0;
  /**
   * The last quarter of the limit is kept for the admin API (`reserved` takes): 256 anonymous
   * uploads announcing 1 MB and sending a byte a second filled the whole budget, and the admin's
   * deploys got 503 for as long as they kept coming.
   */
  private readonly reserve: number;

  constructor(readonly limit: number) {
    this.reserve = Math.floor(limit / 4);
  }

  /** Counts `bytes`, or returns false (counting nothing) when they would pass the limit: without `reserved`, the limit less the reserve. */
  take(bytes: number, reserved = false): boolean {
    if (this.held + bytes > this.limit - (reserved ? 0 : this.reserve)) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held -= bytes;
  }
}

const budgets = new WeakMap<Server, ReceiveBudget>();

/** The budget of `server`, made on first use with `limit`. */
export function receiveBudget(server: Server, limit: number): ReceiveBudget {
  let budget = budgets.get(server);
  if (!budget) budgets.set(server, (budget = new ReceiveBudget(limit)));
  return budget;
}

/** The budget of `server` if it has one (a websocket node on a server Runnel did not build has none). */
export function receiveBudgetOf(server: Server): ReceiveBudget | undefined {
  return budgets.get(server);
}
