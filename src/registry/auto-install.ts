/**
 * Node-RED's `externalModules.autoInstall`: the node modules a user dir's records name but its
 * `node_modules` lacks (the container whose image has no `node_modules`) are installed after the
 * start, through the palette installer and its policy, as Node-RED does; the flows start
 * meanwhile, and those waiting for the missing types start as each module arrives. A failed
 * install is tried again after `autoInstallRetry`, that wait doubling every five attempts up to
 * eight times — Node-RED's schedule.
 */
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../base/clock.js';
import { errorMessage } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import { exists } from '../storage/atomic-file.js';
import type { ModuleRecord } from './module-sync.js';
import { listedNodeRedModules } from './node-red-config.js';

export interface MissingModule {
  name: string;
  version: string | undefined;
}

export interface AutoInstallHost {
  log: Logger;
  /** Milliseconds before the first retry. */
  retryMs: number;
  install(name: string, version: string | undefined): Promise<unknown>;
  /** Waits between attempts; by default a timer that does not keep a stopped process alive. */
  clock?: Pick<Clock, 'sleep'>;
}

/** Node-RED's wait after the `attempts`th attempt failed: 1x up to the fourth, then 2x, 4x, 8x (every five). */
function retryDelay(retryMs: number, attempts: number): number {
  return retryMs * 2 ** Math.min(Math.floor(attempts / 5), 3);
}

/**
 * What Node-RED's `.config.nodes.json` lists with an enabled set, and what Runnel recorded as
 * installed from the registry, that is neither loaded nor in `node_modules`.
 */
export async function missingModules(userDir: string, records: Readonly<Record<string, ModuleRecord>>, loaded: (name: string) => boolean): Promise<MissingModule[]> {
  const wanted = await listedNodeRedModules(userDir);
  for (const [name, rec] of Object.entries(records)) if (rec.source === 'npm' && !wanted.has(name)) wanted.set(name, rec.version);
  const missing: MissingModule[] = [];
  for (const [name, version] of wanted) {
    if (!loaded(name) && !(await exists(path.join(userDir, 'node_modules', name)))) missing.push({ name, version });
  }
  return missing;
}

export class AutoInstaller {
  private stopped = false;

  constructor(private readonly host: AutoInstallHost) {}

  /** Installs the modules in the background until each is in or the runtime stops. */
  start(missing: MissingModule[]): void {
    if (missing.length === 0) return;
    this.host.log.warn({ modules: missing.map((m) => m.name) }, `installing missing node modules (externalModules.autoInstall): ${missing.map((m) => `${m.name}@${m.version ?? 'latest'}`).join(', ')}`);
    void this.run(missing);
  }

  stop(): void {
    this.stopped = true;
  }

  private async run(missing: MissingModule[]): Promise<void> {
    const sleep = this.host.clock ? (ms: number) => this.host.clock!.sleep(ms) : (ms: number) => delay(ms, undefined, { ref: false });
    let pending = missing;
    for (let attempts = 1; !this.stopped; attempts++) {
      const failed: MissingModule[] = [];
      for (const m of pending) {
        if (this.stopped) return;
        try {
          await this.host.install(m.name, m.version);
        } catch (err) {
          failed.push(m);
          this.host.log.warn({ module: m.name, version: m.version, err: errorMessage(err) }, `installing missing node module ${m.name} failed: ${errorMessage(err)}`);
        }
      }
      if (failed.length === 0) return;
      const wait = retryDelay(this.host.retryMs, attempts);
      this.host.log.info({ modules: failed.map((m) => m.name), ms: wait }, `trying the missing node modules again in ${Math.round(wait / 1000)} s`);
      await sleep(wait);
      pending = failed;
    }
  }
}
