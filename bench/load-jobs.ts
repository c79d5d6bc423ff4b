/** The jobs the load process runs, and what it reports back (plain data: they cross IPC). */

export interface CannonJob {
  kind: 'cannon';
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  expectBody?: string;
  /** Log in as a different user on every request (form body for POST /auth/token). */
  rotateLogins?: { usernames: string[]; password: string; clientId: string };
  /** Run until the harness says stop (over IPC) rather than for `duration`, which is then only a bound. */
  untilStopped?: boolean;
}

/** Sequential GETs with a pause between them: a client-side view of the server's responsiveness. */
export interface ProbeJob {
  kind: 'probe';
  url: string;
  /** Milliseconds between the end of one request and the start of the next. */
  gapMs: number;
  durationMs: number;
}

export type LoadJob = CannonJob | ProbeJob;

export interface CannonResult {
  kind: 'cannon';
  /** 2xx responses per second. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
}

export interface ProbeResult {
  kind: 'probe';
  count: number;
  failures: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  max: number;
}

export type LoadResult = CannonResult | ProbeResult;
