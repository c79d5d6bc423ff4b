import type { PublicSession } from './location.js';

/**
 * The editor sessions other instances hold, by public session id, with when each instance was
 * last heard of: an instance that stops beating (it died, or lost the database) loses its sessions.
 */
export class RemoteSessions {
  private readonly sessions = new Map<string, { origin: string; info: PublicSession }>();
  private readonly heard = new Map<string, number>();

  /** Adds or replaces a session; false when the id belongs to another instance's session. */
  put(origin: string, info: PublicSession, now: number): boolean {
    const known = this.sessions.get(info.session);
    if (known && known.origin !== origin) return false;
    this.sessions.set(info.session, { origin, info });
    this.heard.set(origin, now);
    return true;
  }

  /** The session, when `origin` holds it. */
  get(origin: string, id: string): PublicSession | undefined {
    const known = this.sessions.get(id);
    return known?.origin === origin ? known.info : undefined;
  }

  /** Removes `origin`'s session `id`; whether it was there. */
  remove(origin: string, id: string): boolean {
    if (this.sessions.get(id)?.origin !== origin) return false;
    this.sessions.delete(id);
    return true;
  }

  /**
   * An instance's beat with the ids of its sessions: removes those it no longer has (their
   * removal was lost) and returns whether it has some this instance has not heard of.
   */
  beat(origin: string, ids: Set<string>, now: number): { removed: string[]; missing: boolean } {
    this.heard.set(origin, now);
    const removed: string[] = [];
    let known = 0;
    for (const [id, s] of this.sessions) {
      if (s.origin !== origin) continue;
      if (ids.has(id)) known++;
      else {
        this.sessions.delete(id);
        removed.push(id);
      }
    }
    return { removed, missing: known < ids.size };
  }

  /** Drops the sessions of every instance not heard of since `before`; returns their ids. */
  sweep(before: number): string[] {
    const removed: string[] = [];
    for (const [origin, at] of this.heard) {
      if (at >= before) continue;
      this.heard.delete(origin);
      for (const [id, s] of this.sessions) {
        if (s.origin !== origin) continue;
        this.sessions.delete(id);
        removed.push(id);
      }
    }
    return removed;
  }

  list(): PublicSession[] {
    return [...this.sessions.values()].map((s) => s.info);
  }
}
