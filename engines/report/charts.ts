// The report's charts: Vega-Lite specifications compiled by vega-lite and rendered to SVG by
// vega on the server (no browser, no canvas), so the page needs no script to show them.
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { ReportData } from './report-data';
import { rateLabel } from './format';

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

const BASE_CONFIG = {
  font: FONT,
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#e8e8e8' },
  legend: { labelFontSize: 11, titleFontSize: 12, orient: 'right' },
  view: { stroke: null },
  range: { category: { scheme: 'tableau10' } },
} as const;

/** Renders a Vega-Lite spec to an SVG string. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile({ ...spec, config: { ...BASE_CONFIG, ...(spec.config ?? {}) } } as TopLevelSpec).spec), {
    renderer: 'none',
  });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export interface IntervalRow {
  group: string;
  series: string;
  estimate: number;
  lo: number;
  hi: number;
}

/** Above this many bars the value labels would run into each other; the tooltips keep them. */
const MAX_LABELLED_BARS = 24;

/** Grouped bars (group on x, one bar per series) with 95% interval whiskers, values in %. Each bar
 * is also a coloured line at its value, and has its value written above its whisker where labels
 * fit, so a rate of 0 still shows as a bar with a label, not as a bare whisker (or nothing). */
export function intervalBarSpec(
  rows: readonly IntervalRow[],
  groups: readonly string[],
  series: readonly string[],
  title: string,
  yTitle = '%',
): TopLevelSpec {
  const values = rows.map((r) => ({ ...r, estimate: r.estimate * 100, lo: r.lo * 100, hi: r.hi * 100 }));
  const allZero = values.every((v) => v.estimate === 0);
  const color = { field: 'series', type: 'nominal', sort: [...series], title: 'configuration' } as const;
  return {
    title: {
      text: title,
      anchor: 'start',
      fontSize: 14,
      ...(allZero
        ? {
            subtitle: 'Every value is 0: each bar is the line at 0, its whisker the 95% interval',
            subtitleFontSize: 11,
            subtitleColor: '#5f6368',
          }
        : {}),
    },
    data: { values },
    // A fixed width (a `step` width would apply per offset bar and explode with many series);
    // room for each bar's label.
    width: Math.min(980, Math.max(260, groups.length * (series.length * 18 + 26))),
    height: 240,
    encoding: {
      x: { field: 'group', type: 'nominal', sort: [...groups], title: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'series', type: 'nominal', sort: [...series] },
    },
    layer: [
      {
        mark: { type: 'bar', opacity: 0.85 },
        encoding: {
          y: { field: 'estimate', type: 'quantitative', title: yTitle, scale: { domain: [0, 100] } },
          color,
          tooltip: [
            { field: 'series' },
            { field: 'group' },
            { field: 'estimate', format: '.1f' },
            { field: 'lo', format: '.1f' },
            { field: 'hi', format: '.1f' },
          ],
        },
      },
      // The value as a line the bar's width: what a bar of height 0 still shows.
      { mark: { type: 'tick', thickness: 2.5, orient: 'horizontal' }, encoding: { y: { field: 'estimate', type: 'quantitative' }, color } },
      {
        mark: { type: 'rule', color: '#222', strokeWidth: 1.2 },
        encoding: { y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' } },
      },
      { mark: { type: 'tick', color: '#222', thickness: 1.2, size: 7 }, encoding: { y: { field: 'lo', type: 'quantitative' } } },
      { mark: { type: 'tick', color: '#222', thickness: 1.2, size: 7 }, encoding: { y: { field: 'hi', type: 'quantitative' } } },
      // Values written out where they fit (few bars), and always when all are 0 ("0" is narrow).
      ...(allZero || values.length <= MAX_LABELLED_BARS
        ? [
            {
              mark: { type: 'text', baseline: 'bottom', dy: -3, fontSize: 9, color: '#333' },
              encoding: { y: { field: 'hi', type: 'quantitative' }, text: { field: 'estimate', type: 'quantitative', format: '.0f' } },
            },
          ]
        : []),
    ],
  } as TopLevelSpec;
}

/** Rates per configuration (@1 of each measured rate, plus retrieval F1), with whiskers. */
export function ratesChartSpec(data: ReportData): TopLevelSpec | null {
  const rows: IntervalRow[] = [];
  for (const g of data.metrics.configs) {
    for (const rate of ['typecheck', 'beq', 'faithful'] as const) {
      const m = g[rate];
      if (m) rows.push({ group: rateLabel(rate, '1'), series: g.config, ...m.at1 });
      if (m && m.k > 1) rows.push({ group: rateLabel(rate, 'k', m.k), series: g.config, ...m.atK });
    }
    if (g.retrieval) rows.push({ group: 'retrieval F1', series: g.config, ...g.retrieval.f1 });
  }
  if (rows.length === 0) return null;
  const groups = [...new Set(rows.map((r) => r.group))];
  return intervalBarSpec(
    rows,
    groups,
    data.configs,
    'Rates per configuration (95% intervals over items: Wilson, or bootstrap for shares of samples)',
  );
}

/** Retrieval precision, recall and F1 (macro) per configuration. */
export function retrievalChartSpec(data: ReportData): TopLevelSpec | null {
  const rows: IntervalRow[] = [];
  for (const g of data.metrics.configs) {
    if (!g.retrieval) continue;
    rows.push({ group: 'precision', series: g.config, ...g.retrieval.precision });
    rows.push({ group: 'recall', series: g.config, ...g.retrieval.recall });
    rows.push({ group: 'F1', series: g.config, ...g.retrieval.f1 });
    rows.push({ group: 'micro F1', series: g.config, ...g.retrieval.microF1 });
  }
  if (rows.length === 0) return null;
  return intervalBarSpec(
    rows,
    ['precision', 'recall', 'F1', 'micro F1'],
    data.configs,
    'Dependency retrieval against gold premises (macro over items; micro from totals)',
  );
}

/** Cumulative success against budget, one line per configuration and measure. */
export function budgetChartSpec(data: ReportData, unit: 'repair' | 'steps'): TopLevelSpec | null {
  const curves = unit === 'repair' ? data.repairCurves : data.stepCurves;
  const values = curves.flatMap((c) =>
    c.points.flatMap((p) => [
      { config: c.config, budget: p.budget, measure: 'compiles', value: p.compiled * 100 },
      ...(p.faithful === null ? [] : [{ config: c.config, budget: p.budget, measure: 'faithful', value: p.faithful * 100 }]),
    ]),
  );
  if (values.length === 0) return null;
  return {
    title: {
      text: unit === 'repair' ? 'Cumulative success against repair budget' : 'Cumulative success against agent step budget',
      anchor: 'start',
      fontSize: 14,
    },
    data: { values },
    // One panel per measure, so the two do not tangle; colour is the configuration.
    facet: {
      column: {
        field: 'measure',
        type: 'nominal',
        title: null,
        sort: ['compiles', 'faithful'],
        header: { labelFontSize: 12, labelFontWeight: 'bold' },
      },
    },
    spec: {
      width: 340,
      height: 230,
      mark: { type: 'line', point: true },
      encoding: {
        x: {
          field: 'budget',
          type: 'quantitative',
          title: unit === 'repair' ? 'repair rounds allowed (0 = first attempt only)' : 'agent steps allowed',
          axis: { tickMinStep: 1, format: 'd' },
        },
        y: { field: 'value', type: 'quantitative', title: '% of items', scale: { domain: [0, 100] } },
        color: { field: 'config', type: 'nominal', sort: data.configs, title: 'configuration' },
        tooltip: [{ field: 'config' }, { field: 'measure' }, { field: 'budget' }, { field: 'value', format: '.1f' }],
      },
    },
  } as TopLevelSpec;
}

/** Factorial effects (points) with 95% intervals, in percentage points, zero marked. */
export function effectsChartSpec(analysis: ReportData['factorial'][number]): TopLevelSpec {
  const values = analysis.effects.map((e) => ({
    label: e.label,
    estimate: e.estimate * 100,
    lo: e.lo * 100,
    hi: e.hi * 100,
    kind: e.factors.length === 1 ? 'main effect' : 'interaction',
  }));
  const order = values.map((v) => v.label);
  return {
    title: {
      text: `Factorial effects on ${analysis.response === 'f1' ? 'retrieval F1' : analysis.response} (percentage points, 95% intervals)`,
      anchor: 'start',
      fontSize: 14,
    },
    width: 420,
    height: { step: 26 },
    layer: [
      {
        data: { values },
        mark: { type: 'rule', color: '#555', strokeWidth: 1.5 },
        encoding: {
          y: { field: 'label', type: 'nominal', sort: order, title: null, axis: { labelLimit: 320 } },
          x: { field: 'lo', type: 'quantitative', title: 'effect (pts)' },
          x2: { field: 'hi' },
        },
      },
      {
        data: { values },
        mark: { type: 'point', filled: true, size: 70 },
        encoding: {
          y: { field: 'label', type: 'nominal', sort: order },
          x: { field: 'estimate', type: 'quantitative' },
          color: {
            field: 'kind',
            type: 'nominal',
            title: null,
            scale: { domain: ['main effect', 'interaction'], range: ['#4c78a8', '#f58518'] },
          },
          tooltip: [
            { field: 'label' },
            { field: 'estimate', format: '+.1f' },
            { field: 'lo', format: '+.1f' },
            { field: 'hi', format: '+.1f' },
          ],
        },
      },
      {
        data: { values: [{ zero: 0 }] },
        mark: { type: 'rule', color: '#999', strokeDash: [4, 3] },
        encoding: { x: { field: 'zero', type: 'quantitative' } },
      },
    ],
  } as TopLevelSpec;
}
