/** Turns collected samples into summaries, the console table, Markdown and JSON. */
import type { Goal, MetricDef, Scenario } from './scenarios/types.js';
import { max, median, min } from './stats.js';
import { PEER5_VERSION, PEER_VERSION } from './peer.js';
import { SYSTEM_LABELS, type SystemKind } from './systems.js';

export type Samples = Record<string, Partial<Record<SystemKind, number[]>>>;

export interface Figure {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

export interface GoalVerdict {
  goal: string;
  /** undefined while a figure it needs is missing. */
  met: boolean | undefined;
}

export interface MetricSummary {
  key: string;
  label: string;
  unit: string;
  digits: number;
  figures: Partial<Record<SystemKind, Figure>>;
  /** Runnel median / Node-RED 4.1.15 median. */
  ratio: number | undefined;
  /** Runnel median / Node-RED 5.0.7 median, and the same with Runnel on Node-RED 5's Node.js 24. */
  ratio5: number | undefined;
  ratio5On24: number | undefined;
  /** Runnel median / bare-server median, where the bare server took part. */
  ofCeiling: number | undefined;
  verdicts: GoalVerdict[];
}

export interface ScenarioSummary {
  name: string;
  description: string;
  metrics: MetricSummary[];
  errors: string[];
  /** Per system, what its missing figures show instead (a round cut off: "not serving after 5 min"). */
  notes: Partial<Record<SystemKind, string>>;
}

export interface RunMeta {
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  peer: string;
  peer5: string;
  /** The systems measured (columns), and the version of the Node.js 24 binary the `-24`/`-5` ones ran on. */
  systems: SystemKind[];
  node24: string | undefined;
  /** 1-minute load average at the start and end: other work on the machine skews the figures. */
  loadAverage: { start: number; end: number };
  options: Record<string, unknown>;
  unavailable: Partial<Record<SystemKind, string>>;
}

function figure(samples: number[] | undefined): Figure | undefined {
  if (!samples || samples.length === 0) return undefined;
  return { median: median(samples), min: min(samples), max: max(samples), samples };
}

/** The Node-RED versions a ratio goal is checked against, as named in verdicts. */
const PEERS: { kind: SystemKind; version: string }[] = [
  { kind: 'node-red', version: PEER_VERSION },
  { kind: 'node-red-5', version: PEER5_VERSION },
];

function goalText(goal: Goal, unit: string): string {
  const op = goal.op === '<=' ? '≤' : goal.op === '>=' ? '≥' : '<';
  if (goal.kind === 'ratio') return `ratio ${op} ${goal.value}`;
  if (goal.kind === 'ceiling') return `${op} ${goal.value} of bare`;
  return `Runnel ${op} ${goal.value} ${unit}`;
}

function holds(op: Goal['op'], value: number | undefined, bound: number): boolean | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  return op === '<=' ? value <= bound : op === '>=' ? value >= bound : value < bound;
}

const over = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined ? a / b : undefined);

/**
 * A ratio goal holds against each Node-RED in the run (the performance goals stand for 5.0.7 as
 * for 4.1.15), always with Runnel on the machine's Node.js; absolute and ceiling goals once.
 */
function summariseMetric(def: MetricDef, samples: Partial<Record<SystemKind, number[]>>, systems: SystemKind[]): MetricSummary {
  const figures: Partial<Record<SystemKind, Figure>> = {};
  for (const kind of Object.keys(samples) as SystemKind[]) {
    const f = figure(samples[kind]);
    if (f) figures[kind] = f;
  }
  const median = (kind: SystemKind) => figures[kind]?.median;
  const r = median('runnel');
  const ratios: Partial<Record<SystemKind, number>> = { 'node-red': over(r, median('node-red')), 'node-red-5': over(r, median('node-red-5')) };
  const ofCeiling = def.vsCeiling ? over(r, median('bare')) : undefined;
  const verdicts = (def.goals ?? []).flatMap((goal) => {
    const text = goalText(goal, def.unit);
    if (goal.kind !== 'ratio') return [{ goal: text, met: holds(goal.op, goal.kind === 'ceiling' ? ofCeiling : r, goal.value) }];
    return PEERS.filter((p) => systems.includes(p.kind))
      .map((p) => ({ goal: `${text} vs ${p.version}`, met: holds(goal.op, ratios[p.kind], goal.value) }));
  });
  return {
    key: def.key, label: def.label, unit: def.unit, digits: def.digits, figures,
    ratio: ratios['node-red'], ratio5: ratios['node-red-5'], ratio5On24: over(median('runnel-24'), median('node-red-5')),
    ofCeiling, verdicts,
  };
}

export function summarise(
  scenario: Scenario, samples: Samples, errors: string[], notes: ScenarioSummary['notes'], systems: SystemKind[],
): ScenarioSummary {
  return {
    name: scenario.name,
    description: scenario.description,
    metrics: scenario.metrics.map((def) => summariseMetric(def, samples[def.key] ?? {}, systems)),
    errors,
    notes,
  };
}

function num(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function cell(f: Figure | undefined, m: MetricSummary, missing: string): string {
  if (!f) return missing;
  return `${num(f.median, m.digits)} (${num(f.min, m.digits)}–${num(f.max, m.digits)})`;
}

function verdictText(m: MetricSummary): string {
  return m.verdicts.map((v) => `${v.goal} ${v.met === undefined ? 'pending' : v.met ? 'met' : 'missed'}`).join('; ');
}

const ratioNum = (value: number | undefined) => (value === undefined ? '—' : num(value, value < 1 ? 3 : 2));

function ratio5Text(m: MetricSummary): string {
  const on24 = m.ratio5On24 === undefined ? '' : ` (on Node 24: ${ratioNum(m.ratio5On24)})`;
  return m.ratio5 === undefined && !on24 ? '—' : `${ratioNum(m.ratio5)}${on24}`;
}

function columnLabel(kind: SystemKind, meta: RunMeta): string {
  return kind === 'node-red' ? `Node-RED ${meta.peer}` : kind === 'node-red-5' ? `Node-RED ${meta.peer5}` : SYSTEM_LABELS[kind];
}

/** A column per system in the run, then the floor, the ratio to each Node-RED, Runnel's share of the floor, the goals. */
function columns(meta: RunMeta): { header: string; value(s: ScenarioSummary, m: MetricSummary): string }[] {
  const missing = (s: ScenarioSummary, kind: SystemKind) => s.notes[kind] ?? (meta.unavailable[kind] ? 'pending' : '—');
  const has = (kind: SystemKind) => meta.systems.includes(kind);
  return [
    { header: 'scenario', value: (s) => s.name },
    { header: 'metric', value: (_s, m) => m.label },
    { header: 'unit', value: (_s, m) => m.unit },
    ...meta.systems.map((kind) => ({
      header: `${columnLabel(kind, meta)} median (min–max)`,
      value: (s: ScenarioSummary, m: MetricSummary) => cell(m.figures[kind], m, missing(s, kind)),
    })),
    { header: 'bare / floor', value: (_s, m) => cell(m.figures.bare, m, '') },
    ...(has('node-red') ? [{ header: `Runnel/Node-RED ${meta.peer}`, value: (_s: ScenarioSummary, m: MetricSummary) => ratioNum(m.ratio) }] : []),
    ...(has('node-red-5') ? [{ header: `Runnel/Node-RED ${meta.peer5}`, value: (_s: ScenarioSummary, m: MetricSummary) => ratio5Text(m) }] : []),
    { header: 'Runnel/bare', value: (_s, m) => (m.ofCeiling === undefined ? '—' : num(m.ofCeiling, 2)) },
    { header: 'goal', value: (_s, m) => verdictText(m) },
  ];
}

function rows(summaries: ScenarioSummary[], meta: RunMeta): string[][] {
  const cols = columns(meta);
  return [cols.map((c) => c.header), ...summaries.flatMap((s) => s.metrics.map((m) => cols.map((c) => c.value(s, m))))];
}

/** A plain aligned table for the terminal. */
export function renderTable(summaries: ScenarioSummary[], meta: RunMeta): string {
  const all = rows(summaries, meta);
  const widths = all[0].map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const out = [line(all[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)];
  return [...out, ...footnotes(summaries, meta)].join('\n') + '\n';
}

function footnotes(summaries: ScenarioSummary[], meta: RunMeta): string[] {
  const notes: string[] = [];
  for (const [kind, why] of Object.entries(meta.unavailable)) notes.push(`${SYSTEM_LABELS[kind as SystemKind]} not measured: ${why}`);
  for (const s of summaries) for (const e of s.errors) notes.push(`${s.name}: ${e}`);
  return notes.length ? ['', ...notes] : [];
}

export function renderMarkdown(summaries: ScenarioSummary[], meta: RunMeta): string {
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  const [headers, ...body] = rows(summaries, meta);
  const table = [headers, headers.map(() => '---'), ...body].map((r) => `| ${r.map(esc).join(' | ')} |`);
  const lines = [
    `# Benchmark results: Runnel vs Node-RED ${meta.peer} and ${meta.peer5}`,
    '',
    `- Date: ${meta.date}`,
    `- Node.js: ${meta.node} (harness, Runnel, Node-RED ${meta.peer}); ${meta.node24 ?? 'no Node.js 24'} (Node-RED ${meta.peer5}, Runnel on Node 24); CPU: ${meta.cpus} × ${meta.cpuModel}`,
    `- Peers: node-red@${meta.peer}, node-red@${meta.peer5}`,
    `- Load average (1 min) at start / end: ${meta.loadAverage.start.toFixed(2)} / ${meta.loadAverage.end.toFixed(2)}`,
    `- Options: \`${JSON.stringify(meta.options)}\``,
    '',
    ...table,
    ...footnotes(summaries, meta).map((n) => (n ? `- ${n}` : n)),
  ];
  return lines.join('\n') + '\n';
}

export function renderJson(summaries: ScenarioSummary[], meta: RunMeta): string {
  // Missing figures stay visible as null rather than vanishing keys.
  return JSON.stringify({ meta, scenarios: summaries }, (_key, value: unknown) => value ?? null, 2) + '\n';
}
