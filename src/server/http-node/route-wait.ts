import type { IncomingMessage, ServerResponse } from 'node:http';
import { statusOf } from '../../base/errors.js';
import { sendJson } from './not-found.js';

/**
 * Requests that no http-in route took while the flows are starting or a deploy is replacing them
 * wait until the flows run again and are then routed once more: a route being replaced answers
 * late rather than 404, and a route the new flows no longer have still gets its 404. A request
 * waits at most `boundMs` in all (across back-to-back deploys), then gets 503 `route_pending`.
 */
export class RouteWait {
  /** When each waiting request's wait runs out (epoch ms), kept across its retries. */
  private readonly deadlines = new WeakMap<IncomingMessage, number>();

  /**
   * @param pending - the runtime's signal: a promise while the flows are in transition
   * @param boundMs - httpNodeRouteWait; 0 answers at once as Node-RED does
   */
  constructor(private readonly pending: () => Promise<void> | undefined, private readonly boundMs: number) {}

  /** Whether an unmatched request would wait now. */
  get active(): boolean {
    return this.boundMs > 0 && this.pending() !== undefined;
  }

  /**
   * Takes an unmatched request if the flows are in transition: `again` routes it once they run,
   * or it is answered 503 when its time is up. False when the request is not taken.
   */
  hold(req: IncomingMessage, res: ServerResponse, again: () => void): boolean {
    const settled = this.boundMs > 0 ? this.pending() : undefined;
    if (settled === undefined) return false;
    const now = Date.now();
    let deadline = this.deadlines.get(req);
    if (deadline === undefined) this.deadlines.set(req, (deadline = now + this.boundMs));
    if (deadline <= now) {
      this.expire(res);
      return true;
    }
    let over = false;
    const timer = setTimeout(() => {
      over = true;
      this.expire(res);
    }, deadline - now);
    void settled.then(() => {
      if (over) return;
      clearTimeout(timer);
      // A client that gave up is not routed: its flow would answer a closed socket.
      if (!res.destroyed && !res.writableEnded) again();
    });
    return true;
  }

  private expire(res: ServerResponse): void {
    if (res.headersSent || res.destroyed) return;
    res.setHeader('Retry-After', '1');
    sendJson(res, statusOf('route_pending'), { code: 'route_pending', message: `No route took the request within ${this.boundMs} ms while flows were starting or being deployed` });
  }
}
