import { EventEmitter } from 'node:events';
import { errorMessage } from '../base/errors.js';
import type { Logger } from '../base/log.js';

/**
 * RED.events: Node-RED's runtime event bus, shared with every module. A listener is module code,
 * so each one runs on its own: one that throws (or rejects) is logged with the event's name and
 * the others still run, and whoever emitted — a deploy, the start-up — carries on.
 */
export class RuntimeEvents extends EventEmitter {
  constructor(private readonly log: Logger) {
    super();
    this.setMaxListeners(0);
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const listeners = this.rawListeners(event);
    if (listeners.length === 0) return false;
    for (const listener of listeners) {
      try {
        const result = (listener as (...a: unknown[]) => unknown).apply(this, args);
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          (result as Promise<unknown>).then(undefined, (err: unknown) => this.failed(event, err));
        }
      } catch (err) {
        this.failed(event, err);
      }
    }
    return true;
  }

  private failed(event: string | symbol, err: unknown): void {
    this.log.error({ event: String(event), err: errorMessage(err) }, `a handler of the runtime event ${String(event)} failed: ${errorMessage(err)}`);
  }
}
