/** Turns collected samples into summaries, the console table, Markdown and JSON. */
import type { Goal, MetricDef, Scenario } from './scenarios/types.js';
import { max, median, min } from './stats.js';
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
  /** Runnel median / Node-RED median. */
  ratio: number | undefined;
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
  /** 1-minute load average at the start and end: other work on the machine skews the figures. */
  loadAverage: { start: number; end: number };
  options: Record<string, unknown>;
  unavailable: Partial<Record<SystemKind, string>>;
}

function figure(samples: number[] | undefined): Figure | undefined {
  if (!samples || samples.length === 0) return undefined;
  return { median: median(samples), min: min(samples), max: max(samples), samples };
}

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

function summariseMetric(def: MetricDef, samples: Partial<Record<SystemKind, number[]>>): MetricSummary {
  const figures: Partial<Record<SystemKind, Figure>> = {};
  for (const kind of Object.keys(samples) as SystemKind[]) {
    const f = figure(samples[kind]);
    if (f) figures[kind] = f;
  }
  const r = figures.runnel?.median;
  const nr = figures['node-red']?.median;
  const bare = figures.bare?.median;
  const ratio = r !== undefined && nr !== undefined ? r / nr : undefined;
  const ofCeiling = def.vsCeiling && r !== undefined && bare !== undefined ? r / bare : undefined;
  const verdicts = (def.goals ?? []).map((goal) => {
    const value = goal.kind === 'ratio' ? ratio : goal.kind === 'ceiling' ? ofCeiling : r;
    return { goal: goalText(goal, def.unit), met: holds(goal.op, value, goal.value) };
  });
  return { key: def.key, label: def.label, unit: def.unit, digits: def.digits, figures, ratio, ofCeiling, verdicts };
}

export function summarise(
  scenario: Scenario, samples: Samples, errors: string[], notes: ScenarioSummary['notes'],
): ScenarioSummary {
  return {
    name: scenario.name,
    description: scenario.description,
    metrics: scenario.metrics.map((def) => summariseMetric(def, samples[def.key] ?? {})),
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

function ratioText(m: MetricSummary): string {
  const parts: string[] = [];
  if (m.ratio !== undefined) parts.push(num(m.ratio, m.ratio < 1 ? 3 : 2));
  if (m.ofCeiling !== undefined) parts.push(`${num(m.ofCeiling, 2)} of bare`);
  return parts.join(', ') || '—';
}

const HEADERS = ['scenario', 'metric', 'unit', 'Runnel median (min–max)', 'Node-RED median (min–max)', 'bare ceiling', 'Runnel/Node-RED', 'goal'];

function rows(summaries: ScenarioSummary[], meta: RunMeta): string[][] {
  const missing = (s: ScenarioSummary, kind: SystemKind) => s.notes[kind] ?? (meta.unavailable[kind] ? 'pending' : '—');
  return summaries.flatMap((s) =>
    s.metrics.map((m) => [
      s.name, m.label, m.unit,
      cell(m.figures.runnel, m, missing(s, 'runnel')),
      cell(m.figures['node-red'], m, missing(s, 'node-red')),
      cell(m.figures.bare, m, ''),
      ratioText(m),
      verdictText(m),
    ]),
  );
}

/** A plain aligned table for the terminal. */
export function renderTable(summaries: ScenarioSummary[], meta: RunMeta): string {
  const all = [HEADERS, ...rows(summaries, meta)];
  const widths = HEADERS.map((_, i) => Math.max(...all.map((r) => r[i].length)));
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
  const table = [HEADERS, HEADERS.map(() => '---'), ...rows(summaries, meta)].map((r) => `| ${r.map(esc).join(' | ')} |`);
  const lines = [
    `# Benchmark results: Runnel vs Node-RED ${meta.peer}`,
    '',
    `- Date: ${meta.date}`,
    `- Node.js: ${meta.node}; CPU: ${meta.cpus} × ${meta.cpuModel}`,
    `- Peer: node-red@${meta.peer}`,
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
