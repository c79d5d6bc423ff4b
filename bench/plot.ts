/**
 * The scale curves as a picture: an SVG line chart per metric (nodes on the x axis, a line per
 * system: Runnel, Node-RED 4.1.15 and 5.0.7, the floor), turned into a PNG by the same Debian Chromium the browser tests drive.
 * Without Chromium the SVG is kept and the caller is told where.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { ScenarioSummary } from './report.js';
import { PEER5_VERSION, PEER_VERSION } from './peer.js';
import type { SystemKind } from './systems.js';

const CHROMIUM = '/usr/bin/chromium';
const PANEL = { width: 420, height: 300, left: 64, right: 16, top: 36, bottom: 44 };
const COLOURS: Record<SystemKind, string> = {
  runnel: '#1f77b4', 'runnel-24': '#17becf', 'node-red': '#d62728', 'node-red-5': '#ff7f0e', bare: '#7f7f7f',
};
const LABELS: Record<SystemKind, string> = {
  runnel: 'Runnel', 'runnel-24': 'Runnel on Node 24', 'node-red': `Node-RED ${PEER_VERSION}`, 'node-red-5': `Node-RED ${PEER5_VERSION}`, bare: 'floor (bare-deploy)',
};
const LEGEND_STEP = 150;

export interface CurvePoint {
  nodes: number;
  value: number;
}

export interface Curve {
  label: string;
  unit: string;
  lines: Partial<Record<SystemKind, CurvePoint[]>>;
  /** Sizes at which a system gave no figure because its round was cut off, with the reason. */
  cutOff: Partial<Record<SystemKind, { nodes: number; note: string }[]>>;
}

export type Curves = Record<string, Curve>;

/** Collects, per metric, each system's median at each size from the scale-N summaries. */
export function scaleCurves(summaries: ScenarioSummary[], keys: string[]): Curves {
  const curves: Curves = {};
  for (const s of summaries) {
    const nodes = Number(/^scale-(\d+)$/.exec(s.name)?.[1]);
    if (!Number.isFinite(nodes)) continue;
    for (const m of s.metrics) {
      if (!keys.includes(m.key)) continue;
      const curve = (curves[m.key] ??= { label: m.label, unit: m.unit, lines: {}, cutOff: {} });
      for (const [kind, fig] of Object.entries(m.figures) as [SystemKind, { median: number }][]) {
        (curve.lines[kind] ??= []).push({ nodes, value: fig.median });
      }
      for (const [kind, note] of Object.entries(s.notes) as [SystemKind, string][]) {
        if (!m.figures[kind]) (curve.cutOff[kind] ??= []).push({ nodes, note });
      }
    }
  }
  return curves;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const short = (n: number) => (n >= 1000 ? `${Number((n / 1000).toPrecision(3))}k` : String(Number(n.toPrecision(3))));

function panel(key: string, curve: Curve, x0: number): string {
  const { width, height, left, right, top, bottom } = PANEL;
  const points = Object.values(curve.lines).flat() as CurvePoint[];
  const cuts = Object.entries(curve.cutOff) as [SystemKind, { nodes: number; note: string }[]][];
  const maxX = Math.max(...points.map((p) => p.nodes), ...cuts.flatMap(([, c]) => c.map((p) => p.nodes)));
  const maxY = Math.max(...points.map((p) => p.value)) * 1.1 || 1;
  const px = (n: number) => x0 + left + (n / maxX) * (width - left - right);
  const py = (v: number) => top + (1 - v / maxY) * (height - top - bottom);
  const parts = [`<text x="${x0 + width / 2}" y="20" text-anchor="middle" font-weight="bold">${esc(curve.label)} (${esc(curve.unit)})</text>`];
  parts.push(`<line x1="${px(0)}" y1="${py(0)}" x2="${px(maxX)}" y2="${py(0)}" stroke="#333"/>`, `<line x1="${px(0)}" y1="${py(0)}" x2="${px(0)}" y2="${py(maxY)}" stroke="#333"/>`);
  for (let i = 0; i <= 4; i++) {
    const v = (maxY / 4) * i;
    parts.push(`<text x="${px(0) - 6}" y="${py(v) + 4}" text-anchor="end" font-size="11">${short(v)}</text>`);
  }
  for (const n of [...new Set([...points.map((p) => p.nodes), ...cuts.flatMap(([, c]) => c.map((p) => p.nodes))])]) {
    parts.push(`<text x="${px(n)}" y="${py(0) + 16}" text-anchor="middle" font-size="11">${short(n)}</text>`);
  }
  parts.push(`<text x="${x0 + width / 2}" y="${height - 6}" text-anchor="middle" font-size="12">nodes deployed</text>`);
  for (const [kind, line] of Object.entries(curve.lines) as [SystemKind, CurvePoint[]][]) {
    const sorted = [...line].sort((a, b) => a.nodes - b.nodes);
    const colour = COLOURS[kind];
    parts.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${sorted.map((p) => `${px(p.nodes)},${py(p.value)}`).join(' ')}"/>`);
    for (const p of sorted) parts.push(`<circle cx="${px(p.nodes)}" cy="${py(p.value)}" r="3" fill="${colour}"><title>${key}</title></circle>`);
  }
  // No figure to plot: a cross at the top of the axis, and the reason beside it.
  for (const [kind, list] of cuts) {
    for (const c of list) {
      const colour = COLOURS[kind];
      parts.push(`<text x="${px(c.nodes)}" y="${py(maxY) + 4}" text-anchor="middle" font-size="16" fill="${colour}">×</text>`);
      parts.push(`<text x="${px(c.nodes) - 8}" y="${py(maxY) + 18}" text-anchor="end" font-size="10" fill="${colour}">${esc(`${LABELS[kind]}: ${c.note}`)}</text>`);
    }
  }
  return parts.join('\n');
}

export function curvesSvg(curves: Curves): string {
  const keys = Object.keys(curves);
  const width = PANEL.width * Math.max(keys.length, 1);
  const height = PANEL.height + 24;
  // Only the systems that have a line or a cut-off in some panel.
  const shown = new Set(Object.values(curves).flatMap((c) => [...Object.keys(c.lines), ...Object.keys(c.cutOff)]));
  const legend = (Object.keys(COLOURS) as SystemKind[]).filter((k) => shown.has(k)).map((k, i) =>
    `<rect x="${10 + i * LEGEND_STEP}" y="${PANEL.height + 8}" width="12" height="12" fill="${COLOURS[k]}"/><text x="${26 + i * LEGEND_STEP}" y="${PANEL.height + 19}" font-size="12">${LABELS[k]}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...keys.map((k, i) => panel(k, curves[k], i * PANEL.width)),
    ...legend,
    '</svg>',
  ].join('\n');
}

/** Writes `file` (.png) from the curves; answers the path written (the .svg when no Chromium is installed). */
export async function writeCurves(curves: Curves, file: string): Promise<string> {
  const svg = curvesSvg(curves);
  if (!existsSync(CHROMIUM)) {
    const svgFile = file.replace(/\.png$/, '.svg');
    await writeFile(svgFile, svg);
    return svgFile;
  }
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    await page.setContent(`<body style="margin:0">${svg}</body>`);
    await page.locator('svg').screenshot({ path: file });
  } finally {
    await browser.close();
  }
  return file;
}
