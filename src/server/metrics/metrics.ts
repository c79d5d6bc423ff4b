import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueInfo } from '../../runtime/api/queues.js';
import type { MetricsApi, TypeCounters } from '../../runtime/api/metrics.js';

/**
 * The Prometheus metrics (`metrics: {enabled: true}`), one registry per Runnel instance. Label
 * values are bounded: admin routes by their route template, http-in routes by their path pattern,
 * messages by node type — never by node id, message or URL. Message counters are read from the
 * runtime's per-type counters at scrape time, so the message path itself never touches prom-client.
 */

const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DEPLOY_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const INSTALL_SECONDS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** A counter that mirrors a running total kept elsewhere, by label, increasing by what it grew since the last scrape. */
function mirror(counter: Counter<'type'>, last: Map<string, number>, type: string, total: number): void {
  const before = last.get(type) ?? 0;
  if (total > before) counter.inc({ type }, total - before);
  last.set(type, total);
}

export class Metrics {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  private readonly admin: Counter<'method' | 'route' | 'status'>;
  private readonly adminSeconds: Histogram<'method' | 'route'>;
  private readonly httpIn: Counter<'method' | 'route' | 'status'>;
  private readonly httpInSeconds: Histogram<'method' | 'route'>;
  private readonly logins: Counter<'outcome'>;
  private readonly installSeconds: Histogram<'outcome'>;
  private readonly started = new WeakMap<FastifyRequest, number>();

  /** The route templates of the http-in catch-all routes under httpNodeRoot. */
  private readonly httpNodeRoutes: Set<string>;

  constructor(runtime: MetricsApi, httpNodeRoot: string) {
    const registers = [this.registry];
    const root = httpNodeRoot === '/' ? '' : httpNodeRoot;
    this.httpNodeRoutes = new Set([root || '/', `${root}/`, `${root}/*`]);
    collectDefaultMetrics({ register: this.registry });
    this.admin = new Counter({ name: 'runnel_admin_requests_total', help: 'Admin API requests by route template and status', labelNames: ['method', 'route', 'status'], registers });
    this.adminSeconds = new Histogram({ name: 'runnel_admin_request_duration_seconds', help: 'Admin API latency', labelNames: ['method', 'route'], buckets: SECONDS, registers });
    this.httpIn = new Counter({ name: 'runnel_http_in_requests_total', help: 'Requests to the flows\' http-in routes by route pattern and status', labelNames: ['method', 'route', 'status'], registers });
    this.httpInSeconds = new Histogram({ name: 'runnel_http_in_request_duration_seconds', help: 'http-in latency', labelNames: ['method', 'route'], buckets: SECONDS, registers });
    this.logins = new Counter({ name: 'runnel_logins_total', help: 'Password logins by outcome (success, failure, throttled)', labelNames: ['outcome'], registers });
    this.installSeconds = new Histogram({ name: 'runnel_module_install_duration_seconds', help: 'POST /nodes duration by outcome', labelNames: ['outcome'], buckets: INSTALL_SECONDS, registers });
    const deploys = new Counter({ name: 'runnel_deploys_total', help: 'Deploys (including rollbacks and single-flow edits) by type and outcome', labelNames: ['type', 'outcome'], registers });
    const deploySeconds = new Histogram({ name: 'runnel_deploy_duration_seconds', help: 'Deploy duration by type', labelNames: ['type'], buckets: DEPLOY_SECONDS, registers });
    const revision = new Gauge({ name: 'runnel_flows_revision_info', help: 'The active flows rev (value 1)', labelNames: ['rev'], registers });
    let currentRev: string | undefined;
    const showRev = (rev: string) => {
      if (rev === currentRev) return;
      revision.reset();
      revision.set({ rev }, 1);
      currentRev = rev;
    };
    runtime.observeDeploys(({ type, outcome, seconds, rev }) => {
      deploys.inc({ type, outcome });
      deploySeconds.observe({ type }, seconds);
      showRev(rev);
    });
    new Gauge({ name: 'runnel_nodes_running', help: 'Live nodes', registers, collect() { this.set(runtime.nodeCount()); showRev(runtime.rev()); } });
    new Gauge({ name: 'runnel_message_queue_depth', help: 'Messages waiting for delivery', registers, collect() { this.set(runtime.queueDepth()); } });
    new Gauge({
      name: 'runnel_modules_installed', help: 'Node modules installed (not built in)', registers,
      collect() { this.set(runtime.installedModuleCount()); },
    });
    // One read of GET /queues' list per scrape feeds every queue gauge.
    let queues: Promise<QueueInfo[]> | undefined;
    const queueList = () => (queues ??= runtime.queues().finally(() => setImmediate(() => (queues = undefined))));
    const queueGauges: [string, string, (q: QueueInfo) => number | null][] = [
      ['runnel_queue_depth', 'Messages stored on a durable queue (queue wires), in flight included', (q) => q.depth],
      ['runnel_queue_in_flight', 'Messages of a durable queue claimed and not yet finished', (q) => q.inFlight],
      ['runnel_queue_bytes', 'Bytes of the messages stored on a durable queue', (q) => q.bytes],
      ['runnel_queue_oldest_age_seconds', "Age of a durable queue's oldest message", (q) => (q.oldestAgeMs === null ? null : q.oldestAgeMs / 1000)],
      ['runnel_queue_dead_letters', 'Messages this instance sent to a dead-letter output since it started', (q) => q.deadLetters],
    ];
    for (const [name, help, value] of queueGauges) {
      new Gauge({
        name, help, labelNames: ['queue'], registers,
        async collect() {
          this.reset();
          for (const q of await queueList()) {
            const v = value(q);
            if (v !== null) this.set({ queue: q.name }, v);
          }
        },
      });
    }
    const counters: [keyof TypeCounters, string, string][] = [
      ['sent', 'runnel_messages_sent_total', 'Messages sent by node type'],
      ['received', 'runnel_messages_received_total', 'Messages received by node type'],
      ['errors', 'runnel_node_errors_total', 'Errors reported by nodes, by node type'],
    ];
    for (const [field, name, help] of counters) {
      const last = new Map<string, number>();
      new Counter({
        name, help, labelNames: ['type'], registers,
        collect() { for (const [type, c] of runtime.messageCounts()) mirror(this, last, type, c[field]); },
      });
    }
  }

  /** onRequest hook for every route: notes when the request arrived. */
  readonly onRequest = async (request: FastifyRequest): Promise<void> => {
    this.started.set(request, performance.now());
  };

  /** onResponse hook for every route; Fastify runs it for hijacked replies (http-in) too. */
  readonly onResponse = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    this.observe(request, reply.raw.statusCode);
  };

  private observe(request: FastifyRequest, status: number): void {
    const start = this.started.get(request);
    if (start === undefined) return;
    this.started.delete(request);
    const seconds = (performance.now() - start) / 1000;
    const method = request.method;
    const url = request.routeOptions.url;
    if (url !== undefined && this.httpNodeRoutes.has(url)) {
      const route = (request.raw as { route?: { path?: unknown } }).route?.path;
      const labels = { method, route: typeof route === 'string' ? route : 'unmatched' };
      this.httpIn.inc({ ...labels, status: String(status) });
      this.httpInSeconds.observe(labels, seconds);
      return;
    }
    const labels = { method, route: url ?? 'unmatched' };
    this.admin.inc({ ...labels, status: String(status) });
    this.adminSeconds.observe(labels, seconds);
    if (method === 'POST' && url?.endsWith('/auth/token')) this.logins.inc({ outcome: status === 200 ? 'success' : status === 429 ? 'throttled' : 'failure' });
    if (method === 'POST' && url?.endsWith('/nodes')) this.installSeconds.observe({ outcome: status < 400 ? 'success' : 'failure' }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
