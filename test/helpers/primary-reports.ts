import assert from 'node:assert/strict';
import { createServer } from 'node:http';

/**
 * Who was primary when, seen from outside the cluster: a primary-only tab reports `{instance}` ten
 * times a second to an HTTP server in the test process, which no fault between the instances and
 * PostgreSQL reaches. From the reports, two primaries at once and the time without one can be told.
 */

export interface Report {
  instance: string;
  time: number;
}

export interface Reporter {
  url: string;
  /** Every report so far, oldest first. */
  reports: Report[];
  /** The instance of the latest report. */
  latest(): string;
  close(): void;
}

/** Reports of one instance further apart than this belong to two terms. */
const TERM_GAP_MS = 1000;

export async function startReporter(): Promise<Reporter> {
  const reports: Report[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      try {
        reports.push({ instance: (JSON.parse(body) as { instance: string }).instance, time: Date.now() });
      } catch {
        // Not a report: ignored.
      }
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/report`,
    reports,
    latest: () => reports[reports.length - 1]!.instance,
    close: () => void server.close(),
  };
}

/**
 * A primary-only tab reporting to `reportUrl` (each instance's `functionGlobalContext.instance`
 * names it), and a tab serving `text` at GET /text, to tell which deploy an instance runs.
 */
export function reportingFlows(reportUrl: string, text: string): Array<Record<string, unknown>> {
  return [
    { id: 'sched', type: 'tab', label: 'Scheduler', env: [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true', type: 'str' }] },
    { id: 'tick', type: 'inject', z: 'sched', repeat: '0.1', once: true, onceDelay: 0, props: [{ p: 'payload', v: '1', vt: 'num' }], x: 1, y: 1, wires: [['who']] },
    { id: 'who', type: 'function', z: 'sched', outputs: 1, x: 1, y: 1, wires: [['report']], func: "msg.payload = {instance: global.get('instance')}; return msg;" },
    { id: 'report', type: 'http request', z: 'sched', method: 'POST', ret: 'txt', url: reportUrl, x: 1, y: 1, wires: [] },
    { id: 'web', type: 'tab', label: 'Web' },
    { id: 'in', type: 'http in', z: 'web', url: '/text', method: 'get', x: 1, y: 1, wires: [['fn']] },
    { id: 'fn', type: 'function', z: 'web', outputs: 1, x: 1, y: 1, wires: [['out']], func: `msg.payload = ${JSON.stringify(text)}; return msg;` },
    { id: 'out', type: 'http response', z: 'web', x: 1, y: 1, wires: [] },
  ];
}

/** Each instance's terms as primary: runs of reports no further apart than TERM_GAP_MS. */
function terms(reports: Report[]): Array<{ instance: string; from: number; to: number }> {
  const open = new Map<string, { instance: string; from: number; to: number }>();
  const all: Array<{ instance: string; from: number; to: number }> = [];
  for (const r of [...reports].sort((a, b) => a.time - b.time)) {
    const term = open.get(r.instance);
    if (term && r.time - term.to <= TERM_GAP_MS) term.to = r.time;
    else {
      const next = { instance: r.instance, from: r.time, to: r.time };
      open.set(r.instance, next);
      all.push(next);
    }
  }
  return all;
}

export function assertNeverTwoPrimaries(reports: Report[]): void {
  const all = terms(reports);
  for (const a of all) {
    for (const b of all) {
      if (a.instance === b.instance) continue;
      assert.ok(a.to < b.from || b.to < a.from, `two primaries at once: ${JSON.stringify(a)} and ${JSON.stringify(b)}`);
    }
  }
}

/** The longest time without any report between `from` and `to`: how long the cluster had no primary at most. */
export function longestSilence(reports: Report[], from: number, to: number): number {
  const times = [from, ...reports.map((r) => r.time).filter((t) => t > from && t < to).sort((a, b) => a - b), to];
  let longest = 0;
  for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
  return longest;
}
