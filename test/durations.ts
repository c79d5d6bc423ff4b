import path from 'node:path';

/**
 * A node:test reporter that prints, after the run, the slowest test files by wall time from their
 * start to their last result: where to look first when the suite gets slow.
 */
interface Event {
  type: string;
  data: { file?: string; name?: string; nesting?: number };
}

const SHOWN = 12;

export default async function* durations(source: AsyncIterable<Event>): AsyncGenerator<string> {
  const spans = new Map<string, { start: number; end: number }>();
  for await (const event of source) {
    const file = event.data?.file;
    if (!file) continue;
    const now = Date.now();
    // Every file is enqueued at once; the runner dequeues one (a test named after its path) when it starts its process.
    if (event.type === 'test:dequeue' && event.data.name === file) spans.set(file, { start: now, end: now });
    const span = spans.get(file);
    if (span && (event.type === 'test:pass' || event.type === 'test:fail')) span.end = now;
  }
  const slowest = [...spans].map(([file, s]) => [file, s.end - s.start] as const).sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  yield `\nslowest test files (wall time, s):\n`;
  for (const [file, ms] of slowest) yield `${(ms / 1000).toFixed(1).padStart(7)}  ${path.relative(process.cwd(), file)}\n`;
}
