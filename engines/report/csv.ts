// The report's metrics CSV: every metric with its interval, one row per group and metric. The
// per-run CSV (runs.csv) is the export's (engines/results/export.ts). RFC 4180 quoting.
import { csvField } from '../results/export';
import type { Interval } from '../metrics/bootstrap';
import type { GroupMetrics } from '../metrics/sweep-metrics';
import type { ReportData } from './report-data';

export function csvLines(header: readonly string[], rows: readonly (readonly (string | number | boolean | null | undefined)[])[]): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

function metricRows(g: GroupMetrics): (string | number)[][] {
  const base = [g.config, g.tag?.key ?? '', g.tag?.value ?? ''];
  const rows: (string | number)[][] = [];
  const add = (metric: string, i: Interval | null | undefined, n: number) => {
    if (i) rows.push([...base, metric, i.estimate, i.lo, i.hi, n]);
  };
  for (const rate of ['typecheck', 'beq', 'faithful'] as const) {
    const m = g[rate];
    if (!m) continue;
    add(`${rate}@1`, m.at1, m.items);
    add(`${rate}@${m.k}`, m.atK, m.items);
    // The unbiased estimator for every k (pass@1 is @1, pass@n is any of n).
    if (m.passAtK.length > 1) for (const p of m.passAtK) add(`${rate}_pass@${p.k}`, p.rate, m.items);
  }
  const r = g.retrieval;
  if (r) {
    add('precision', r.precision, r.items);
    add('recall', r.recall, r.items);
    add('f1', r.f1, r.items);
    add('micro_precision', r.microPrecision, r.items);
    add('micro_recall', r.microRecall, r.items);
    add('micro_f1', r.microF1, r.items);
  }
  add('repair_rounds', g.repairRounds, g.items);
  for (const [stage, l] of Object.entries(g.latency)) {
    rows.push([...base, `latency_${stage}_p50_ms`, l!.p50, '', '', l!.runs] as (string | number)[]);
    rows.push([...base, `latency_${stage}_p95_ms`, l!.p95, '', '', l!.runs] as (string | number)[]);
  }
  if (g.usage) {
    rows.push([...base, 'tokens_per_run', g.usage.meanTotalTokens, '', '', g.usage.runs]);
    rows.push([...base, 'tokens_total', g.usage.totalTokens, '', '', g.usage.runs]);
    if (g.usage.cacheHits !== undefined) rows.push([...base, 'llm_cache_hits', g.usage.cacheHits, '', '', g.usage.runs]);
    if (g.usage.totalCostUsd !== undefined) rows.push([...base, 'cost_usd_total', g.usage.totalCostUsd, '', '', g.usage.runs]);
  }
  return rows;
}

/** Batch mode: each configuration's calls, paid and had they been sent one at a time. */
function costRows(data: ReportData): (string | number)[][] {
  const c = data.cost;
  if (!c || c.batchCalls === 0) return [];
  return c.perConfig.flatMap((p) =>
    p.usd === null || p.usdIfSynchronous === null
      ? []
      : [
          [p.config, '', '', 'llm_batch_calls', p.batchCalls, '', '', p.calls],
          [p.config, '', '', 'cost_usd_if_synchronous', p.usdIfSynchronous, '', '', p.calls],
        ],
  );
}

/** A rescore's agreement per configuration: kappa and weighted kappa (empty where undefined). */
function agreementRows(data: ReportData): (string | number)[][] {
  return (data.judgeAgreement?.configs ?? []).flatMap((c) =>
    (
      [
        ['judge_kappa', c.kappa],
        ['judge_weighted_kappa', c.weightedKappa],
      ] as const
    ).map(([metric, k]) => [c.config, '', '', metric, k.estimate ?? '', k.interval?.lo ?? '', k.interval?.hi ?? '', c.compared]),
  );
}

/** metrics.csv: config, tag_key, tag_value, metric, estimate, lo, hi, n (rates as fractions). */
export function metricsCsv(data: ReportData): string {
  const groups = [...data.metrics.configs, ...data.metrics.byTag];
  return csvLines(
    ['config', 'tag_key', 'tag_value', 'metric', 'estimate', 'lo', 'hi', 'n'],
    [...groups.flatMap(metricRows), ...agreementRows(data), ...costRows(data)],
  );
}
