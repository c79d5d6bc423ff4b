// autocannon ships no types; this covers the part of its programmatic API the bench uses.
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
      timeout?: number;
      expectBody?: string;
    }
    interface Histogram {
      average: number;
      mean: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }
    interface Result {
      /** Seconds. */
      duration: number;
      requests: Histogram;
      /** Milliseconds. */
      latency: Histogram;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      '2xx': number;
    }
  }
  /** The running instance is also a promise of the result; `stop` ends the run early. */
  function autocannon(options: autocannon.Options): Promise<autocannon.Result> & { stop(): void };
  export = autocannon;
}
