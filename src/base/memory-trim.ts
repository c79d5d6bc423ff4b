import v8 from 'node:v8';
import vm from 'node:vm';

/** Seconds of checks after each start or deploy (V8 judges allocation over its last 5 s). */
const CHECKS = 15;
/** A young generation this small (bytes) has nothing left to give back. */
const SMALL = 2 * 1024 * 1024;

type Collect = (options: { type: 'minor' }) => void;
let collect: Collect | null | undefined;

/** V8's own `gc`, reached without a command-line flag; null where the engine refuses. */
function gcFunction(): Collect | null {
  if (collect === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as Collect;
    } catch {
      collect = null;
    }
  }
  return collect;
}

function youngGenerationSize(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Gives back the memory start-up and deploys leave in V8's young generation. Loading modules and
 * building a flow allocate fast, so V8 grows the young generation to its 32 MiB ceiling, and it
 * only shrinks it at a garbage collection that finds the allocation rate low. An idle process has
 * no collections at all, so the pages stay resident for good (a fifth of an idle Runnel's RSS).
 * After each start and deploy, a scavenge a second (well under a millisecond when idle) lets V8
 * see the quiet and shrink; a busy process allocates fast, so V8 keeps the space and nothing
 * changes. Node-RED has the same 32 MiB and keeps it.
 */
export class MemoryTrimmer {
  private timer: NodeJS.Timeout | undefined;
  private left = 0;

  schedule(): void {
    if (!gcFunction()) return;
    this.left = CHECKS;
    this.timer ??= setInterval(() => this.tick(), 1000).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.left-- <= 0 || youngGenerationSize() <= SMALL) {
      this.stop();
      return;
    }
    gcFunction()?.({ type: 'minor' });
  }
}
