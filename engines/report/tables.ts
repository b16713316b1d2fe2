// The report's tables as data (header and rows of cells), rendered by html.ts and markdown.ts
// alike, so the two never disagree.
import type { Stage } from '../../common/run-types';
import type { RefusedBy } from '../../common/lean-types';
import { STAGE_NAMES } from '../../common/stages';
import type { GroupMetrics } from '../metrics/sweep-metrics';
import type { PairedComparison } from '../metrics/compare';
import type { FactorialAnalysis } from '../metrics/factorial';
import type { FactorialDesign, SweepOutcome } from '../../common/sweep';
import type { RateName } from '../metrics/item-outcomes';
import type { ReportData } from './report-data';
import { OUTCOME_ORDER } from './report-data';
import { usdAmount } from './sweep-cost';
import { ms, num, pct, pctInterval, plainInterval, ptsInterval, pValue, rateLabel, rateTitle } from './format';

export type Cell = string | { text: string; href?: string; cls?: string; title?: string };

export interface Table {
  id: string;
  title: string;
  caption?: string;
  header: string[];
  rows: Cell[][];
  /** Columns holding numbers (right-aligned). */
  numeric?: number[];
}

export function cellText(c: Cell): string {
  return typeof c === 'string' ? c : c.text;
}

const RATES: readonly RateName[] = ['typecheck', 'beq', 'faithful'];

interface Column {
  title: string;
  value: (g: GroupMetrics) => string;
}

/** The columns a set of groups has anything for (a rate nobody measured is left out): the @1
 * rates and macro F1, or (`detail`) the @k rates and micro F1. */
function metricColumns(groups: readonly GroupMetrics[], which: 'main' | 'detail' = 'main'): Column[] {
  const cols: Column[] = [];
  for (const rate of RATES) {
    if (!groups.some((g) => g[rate])) continue;
    const k = Math.max(...groups.map((g) => g[rate]?.k ?? 0));
    if (which === 'main') cols.push({ title: rateLabel(rate, '1'), value: (g) => pctInterval(g[rate]?.at1) });
    else if (k > 1) cols.push({ title: rateLabel(rate, 'k', k), value: (g) => pctInterval(g[rate]?.atK) });
  }
  if (groups.some((g) => g.retrieval)) {
    if (which === 'main') cols.push({ title: 'retrieval F1', value: (g) => pctInterval(g.retrieval?.f1) });
    else cols.push({ title: 'retrieval micro F1', value: (g) => pctInterval(g.retrieval?.microF1) });
  }
  return cols;
}

export function summaryTable(data: ReportData): Table {
  const groups = data.metrics.configs;
  const cols = metricColumns(groups);
  const missing = groups.some((g) => g.missingRuns > 0);
  // A retried sweep says, beside the failed runs, how many runs were started again.
  const retried = data.retried ? new Map(data.retried.map((r) => [r.config, r.runs])) : undefined;
  const header = [
    'configuration',
    'items',
    'runs',
    'failed',
    ...(missing ? ['missing'] : []),
    ...(retried ? ['retried'] : []),
    ...cols.map((c) => c.title),
  ];
  return {
    id: 'results',
    title: 'Results per configuration',
    caption: `In %, each with its 95% interval over items: Wilson score where every item succeeds or fails, else percentile bootstrap (B = ${data.bootstrap.resamples}, seed ${data.bootstrap.seed}). @1 averages each item's samples. Failed runs, and units missing from a predictions file, count as failures of every rate. Retrieval F1 is the macro average over items.${retried ? ' Retried: runs that had failed and were started again by `driftline sweep retry`; their new records replace the failed ones.' : ''}`,
    header,
    rows: groups.map((g) => [
      g.config,
      String(g.items),
      String(g.runs),
      String(g.failedRuns),
      ...(missing ? [String(g.missingRuns)] : []),
      ...(retried ? [String(retried.get(g.config) ?? 0)] : []),
      ...cols.map((c) => c.value(g)),
    ]),
    numeric: header.map((_, i) => i).filter((i) => i > 0),
  };
}

/** What each outcome means, said by who decided (a refusal is the screen's, not Lean's). */
export const OUTCOME_LABELS: Record<SweepOutcome, string> = {
  faithful: 'faithful',
  unfaithful: 'compiled, judged unfaithful',
  compiled: 'compiled, not judged',
  'not-compiled': 'Lean rejected',
  refused: 'refused by the screen',
  unchecked: 'not checked (no Lean)',
  'budget-exhausted': 'budget exhausted',
  failed: 'run failed',
  missing: 'missing from the predictions file',
};

/** Refusals that were not the screen's, each a hole found (decision 0017): their own columns. */
export const REFUSED_BY_LABELS: Record<RefusedBy, string> = {
  tampering: 'refused for tampering',
  disagreement: 'refused: screen/Lean disagreement',
};

/** Runs per outcome and configuration: the outcomes that occur, in a fixed order. A refused run
 * counts under the screen, or under tampering or disagreement when the screen let it through. */
export function outcomeTable(data: ReportData): Table {
  const byScreen = (c: ReportData['outcomes'][number]) =>
    (c.counts.refused ?? 0) - (c.refusedBy?.tampering ?? 0) - (c.refusedBy?.disagreement ?? 0);
  type Column = { title: string; value: (c: ReportData['outcomes'][number]) => number };
  const columns: Column[] = OUTCOME_ORDER.flatMap((o): Column[] =>
    o === 'refused'
      ? [
          { title: OUTCOME_LABELS.refused, value: byScreen },
          ...(['tampering', 'disagreement'] as const).map((k) => ({
            title: REFUSED_BY_LABELS[k],
            value: (c: ReportData['outcomes'][number]) => c.refusedBy?.[k] ?? 0,
          })),
        ]
      : [{ title: OUTCOME_LABELS[o], value: (c) => c.counts[o] ?? 0 }],
  );
  const present = columns.filter((col) => data.outcomes.some((c) => col.value(c) > 0));
  const has = (title: string) => present.some((c) => c.title === title);
  const header = ['configuration', ...present.map((c) => c.title)];
  const notComparable = data.outcomes.filter((c) => (c.notComparable ?? 0) > 0);
  return {
    id: 'outcomes',
    title: 'Outcomes per configuration',
    caption: `Runs per outcome. "Lean rejected": Lean reported errors on the last attempt; "refused by the screen": the statement screen refused the last attempt before Lean, which never saw it.${has(REFUSED_BY_LABELS.tampering) ? ' "Refused for tampering": the screen let the text through and code in it forged the Lean REPL\'s reply; the check was refused, never compiled, and each one is a hole in the screen.' : ''}${has(REFUSED_BY_LABELS.disagreement) ? ' "Screen/Lean disagreement": Lean could not parse a text the screen accepted as well formed; refused, never compiled, and each one is a hole in the screen.' : ''}${has(OUTCOME_LABELS.missing) ? ' "Missing from the predictions file": a predictions configuration\'s file had no statement for the item and sample; nothing ran, and it counts as a failure of every rate.' : ''}${notComparable.length > 0 ? ` Equivalence not comparable (the two statements' definitions differ, so neither was proved from the other; counted as not equivalent by BEq+): ${notComparable.map((c) => `${c.config} ${c.notComparable}`).join(', ')}.` : ''} Lean: ${data.lean.line}.`,
    header,
    rows: data.outcomes.map((c) => [c.config, ...present.map((col) => String(col.value(c)))]),
    numeric: header.map((_, i) => i).filter((i) => i > 0),
  };
}

/** @k rates, micro F1, repair rounds, latency, tokens and cost. */
export function detailTable(data: ReportData): Table {
  const groups = data.metrics.configs;
  const cols = metricColumns(groups, 'detail');
  const usage = groups.some((g) => g.usage);
  const cost = groups.some((g) => g.usage?.totalCostUsd !== undefined);
  const header = ['configuration', ...cols.map((c) => c.title), 'repair rounds / run', 'latency p50 / p95'];
  const cached = groups.some((g) => g.usage?.cacheHits !== undefined);
  if (usage) header.push('tokens / run', 'tokens');
  if (cached) header.push('LLM calls from cache');
  if (cost) header.push('cost (USD)');
  // Batch mode: what each configuration's calls would have cost sent one at a time (the ledger's).
  const batchCost = data.cost && data.cost.batchCalls > 0 ? new Map(data.cost.perConfig.map((c) => [c.config, c])) : undefined;
  if (batchCost) header.push('calls in batches', 'cost one at a time (USD)');
  const rows = groups.map((g) => {
    const row: Cell[] = [
      g.config,
      ...cols.map((c) => c.value(g)),
      plainInterval(g.repairRounds),
      `${ms(g.latency.total?.p50)} / ${ms(g.latency.total?.p95)}`,
    ];
    if (usage)
      row.push(
        g.usage ? Math.round(g.usage.meanTotalTokens).toLocaleString('en-US') : '–',
        g.usage ? g.usage.totalTokens.toLocaleString('en-US') : '–',
      );
    if (cached)
      row.push(g.usage?.cacheHits !== undefined ? `${g.usage.cacheHits} of ${g.usage.cacheHits + (g.usage.cacheMisses ?? 0)}` : '–');
    if (cost)
      row.push(g.usage?.totalCostUsd !== undefined ? `${g.usage.totalCostUsd.toFixed(2)} (${g.usage.meanCostUsd!.toFixed(4)}/run)` : '–');
    if (batchCost) {
      const c = batchCost.get(g.config);
      row.push(
        c ? `${c.batchCalls} of ${c.calls}` : '–',
        c && c.usd !== null && c.usdIfSynchronous !== null ? `${usdAmount(c.usdIfSynchronous)} (paid ${usdAmount(c.usd)})` : '–',
      );
    }
    return row;
  });
  return {
    id: 'details',
    title: 'More per configuration',
    caption:
      '@k counts an item when any of its k samples succeeds. Repair rounds (mean per run, with interval), latency (all stages of a run) and tokens cover runs that were not failed.',
    header,
    rows,
    numeric: header.map((_, i) => i).filter((i) => i > 0),
  };
}

export function retrievalTable(data: ReportData): Table | null {
  const groups = data.metrics.configs.filter((g) => g.retrieval);
  if (groups.length === 0) return null;
  return {
    id: 'retrieval',
    title: 'Dependency retrieval',
    caption:
      "Retrieved premises against the gold dependencies, in %. Macro: per run, averaged over an item's samples, then over items. Micro: from hits, retrieved and gold counts summed over all runs.",
    header: ['configuration', 'items', 'precision', 'recall', 'F1', 'micro precision', 'micro recall', 'micro F1'],
    rows: groups.map((g) => {
      const r = g.retrieval!;
      return [
        g.config,
        String(r.items),
        pctInterval(r.precision),
        pctInterval(r.recall),
        pctInterval(r.f1),
        pctInterval(r.microPrecision),
        pctInterval(r.microRecall),
        pctInterval(r.microF1),
      ];
    }),
    numeric: [1, 2, 3, 4, 5, 6, 7],
  };
}

export function comparisonVerdict(c: PairedComparison): string {
  if (c.verdict === 'tie') return 'tie';
  if (c.verdict === 'too-few') return `too few items (n = ${c.items}) for a verdict`;
  if (!c.significant) return 'within noise';
  return c.diff.estimate > 0 ? `${c.a} higher` : `${c.b} higher`;
}

function metricTitle(metric: PairedComparison['metric']): string {
  if (metric === 'f1') return 'retrieval F1';
  const [rate, at] = metric.split('@') as [RateName, string];
  return rateLabel(rate, at === '1' ? '1' : 'k');
}

const COMPARISONS_CAPTION =
  'Rates: McNemar\'s exact test on the first sample of each item (@1) or on @k; b / c = items only the first / only the second configuration got right. Retrieval F1: the paired sign-flip test on the per-item differences (exact up to 20 items, Monte Carlo beyond). Differences in percentage points with 95% paired-bootstrap intervals; p-values Holm-adjusted over all pairs compared on the same metric. "within noise" means adjusted p ≥ 0.05; "too few items" means the test cannot reach 0.05 on this many items whatever they show.';

function comparisonRow(c: PairedComparison, flip: boolean): Cell[] {
  const [hi, lo] = flip ? [c.b, c.a] : [c.a, c.b];
  const diff = flip ? { estimate: -c.diff.estimate, lo: -c.diff.hi, hi: -c.diff.lo } : c.diff;
  const counts = c.mcnemar ? (flip ? `${c.mcnemar.c} / ${c.mcnemar.b}` : `${c.mcnemar.b} / ${c.mcnemar.c}`) : '–';
  return [
    metricTitle(c.metric),
    hi,
    lo,
    String(c.items),
    ptsInterval(diff),
    counts,
    pValue(c.p),
    pValue(c.pHolm),
    { text: comparisonVerdict(c), cls: c.significant ? 'sig' : 'noise' },
  ];
}

/** For each @1 metric and retrieval F1: configurations ranked, each compared with the next one
 * down. The question a reader asks first: is the order real? */
export function rankedComparisonsTable(data: ReportData): Table | null {
  const rows: Cell[][] = [];
  const value: Record<string, (g: GroupMetrics) => number | undefined> = {
    'faithful@1': (g) => g.faithful?.at1.estimate,
    'typecheck@1': (g) => g.typecheck?.at1.estimate,
    'beq@1': (g) => g.beq?.at1.estimate,
    f1: (g) => g.retrieval?.f1.estimate,
  };
  for (const [metric, v] of Object.entries(value)) {
    const ranked = data.metrics.configs.filter((g) => v(g) !== undefined).sort((x, y) => v(y)! - v(x)!);
    for (let i = 0; i + 1 < ranked.length; i++) {
      const [a, b] = [ranked[i]!.config, ranked[i + 1]!.config];
      const c = data.comparisons.find((x) => x.metric === metric && ((x.a === a && x.b === b) || (x.a === b && x.b === a)));
      if (c) rows.push(comparisonRow(c, c.a !== a));
    }
  }
  if (rows.length === 0) return null;
  return {
    id: 'ranked',
    title: 'Is each configuration ahead of the next one?',
    caption: `Per metric, configurations in order of their estimate, each against the one ranked just below it. ${COMPARISONS_CAPTION}`,
    header: ['metric', 'higher', 'lower', 'items', 'difference (pts)', 'b / c', 'p', 'p (Holm)', 'verdict'],
    rows,
    numeric: [3, 4, 5, 6, 7],
  };
}

export function comparisonsTable(data: ReportData): Table | null {
  if (data.comparisons.length === 0) return null;
  const sig = data.comparisons.filter((c) => c.significant).length;
  return {
    id: 'comparisons',
    title: `All pairs (${sig} of ${data.comparisons.length} comparisons beyond noise)`,
    caption: `Each pair of configurations on the items both ran. ${COMPARISONS_CAPTION}`,
    header: ['metric', 'A', 'B', 'items', 'A − B (pts)', 'b / c', 'p', 'p (Holm)', 'verdict'],
    rows: data.comparisons.map((c) => comparisonRow(c, false)),
    numeric: [3, 4, 5, 6, 7],
  };
}

const STAGE_ORDER: readonly (Stage | 'total')[] = [...STAGE_NAMES, 'total'];

export function latencyTable(data: ReportData): Table | null {
  const stages = STAGE_ORDER.filter((s) => data.metrics.configs.some((g) => g.latency[s]));
  if (stages.length === 0) return null;
  return {
    id: 'latency',
    title: 'Latency per stage',
    caption: 'Wall-clock time per run, summed over repair rounds: median / 95th percentile.',
    header: ['configuration', ...stages],
    rows: data.metrics.configs.map((g) => [
      g.config,
      ...stages.map((s) => (g.latency[s] ? `${ms(g.latency[s]!.p50)} / ${ms(g.latency[s]!.p95)}` : '–')),
    ]),
    numeric: stages.map((_, i) => i + 1),
  };
}

/** One table per tag key: configuration × tag value. */
export function tagTables(data: ReportData): Table[] {
  const keys = [...new Set(data.metrics.byTag.map((g) => g.tag!.key))];
  return keys.map((key) => {
    const groups = data.metrics.byTag.filter((g) => g.tag!.key === key);
    const cols = metricColumns(groups).filter((c) => !c.title.includes('micro'));
    return {
      id: `tag-${key}`,
      title: `By ${key}`,
      header: ['configuration', key, 'items', ...cols.map((c) => c.title)],
      rows: groups.map((g) => [g.config, g.tag!.value, String(g.items), ...cols.map((c) => c.value(g))]),
      numeric: [2, ...cols.map((_, i) => i + 3)],
    };
  });
}

export function factorialTables(a: FactorialAnalysis, design?: FactorialDesign): Table[] {
  const cells: Table = {
    id: `factorial-cells-${a.response}`,
    title: `Cells (${a.response})`,
    header: ['configuration', ...a.factors, `${a.response} (%)`],
    rows: a.cells.map((c) => [c.config, ...a.factors.map((f) => String(c.levels[f])), pct(c.mean)]),
    numeric: [a.factors.length + 1],
  };
  const effects: Table = {
    id: `factorial-effects-${a.response}`,
    title: `Effects (${a.response})`,
    caption: `Main effect: mean over cells with the factor on minus mean with it off; interaction: difference in differences, averaged over the other factors. Percentage points, 95% bootstrap intervals over the ${a.items} items every cell ran.`,
    header: ['effect', 'estimate (pts)', 'verdict'],
    rows: a.effects.map((e) => {
      const clear = e.lo > 0 || e.hi < 0;
      return [
        e.label,
        ptsInterval(e),
        { text: clear ? (e.estimate > 0 ? 'positive' : 'negative') : 'interval includes 0', cls: clear ? 'sig' : 'noise' },
      ];
    }),
    numeric: [1],
  };
  if (a.simpleEffects.length === 0) return [cells, effects];
  const level = (factor: string, l: 0 | 1) => {
    const f = design?.factors.find((x) => x.name === factor);
    return `${factor} = ${l === 0 ? (f?.low ?? '0') : (f?.high ?? '1')}`;
  };
  const rows: Cell[][] = [];
  for (let i = 0; i < a.simpleEffects.length; i += 2) {
    const [lo, hi] = [a.simpleEffects[i]!, a.simpleEffects[i + 1]!];
    rows.push([lo.factor, { text: `${level(lo.given, 0)}: ${ptsInterval(lo)}` }, { text: `${level(hi.given, 1)}: ${ptsInterval(hi)}` }]);
  }
  const simple: Table = {
    id: `factorial-simple-${a.response}`,
    title: `Simple effects (${a.response})`,
    caption:
      'The effect of one factor with another held at each level, averaged over the rest (percentage points, 95% intervals). Two simple effects far apart are what a two-factor interaction measures: one factor matters mainly when the other is off.',
    header: ['factor', 'other factor low', 'other factor high'],
    rows,
  };
  return [cells, effects, simple];
}

/** The test behind a comparison, in words. */
function testName(c: PairedComparison): string {
  if (c.test === 'mcnemar-exact') return "McNemar's exact test";
  if (c.test === 'sign-flip-exact') return 'exact sign-flip test';
  return `sign-flip test, ${c.permutations ?? '?'} random sign assignments`;
}

/** Plain-language findings: on each measured metric, the best configuration against the
 * runner-up, with a verdict only where the items can carry one. Every verdict states n. */
export function findings(data: ReportData): string[] {
  const out: string[] = [];
  const groups = data.metrics.configs;
  if (groups.length < 2) return out;
  const lead = (metric: PairedComparison['metric'], title: string, value: (g: GroupMetrics) => number | undefined) => {
    const ranked = groups.filter((g) => value(g) !== undefined).sort((x, y) => value(y)! - value(x)!);
    if (ranked.length < 2) return;
    const [first, second] = [ranked[0]!, ranked[1]!];
    const c = data.comparisons.find(
      (x) => x.metric === metric && ((x.a === first.config && x.b === second.config) || (x.a === second.config && x.b === first.config)),
    );
    const gap = (value(first)! - value(second)!) * 100;
    const n = c ? `n = ${c.items} item${c.items === 1 ? '' : 's'}` : 'no items in common';
    if (Math.abs(gap) < 1e-9) {
      out.push(`${title}: ${first.config} and ${second.config} tie at ${pct(value(first))}% (${n}).`);
      return;
    }
    const head = `${title}: ${first.config} ${pct(value(first))}%, ${gap.toFixed(1)} pts above ${second.config} (${n})`;
    if (!c) {
      out.push(`${head}; no paired test: they share no items.`);
      return;
    }
    const test = testName(c);
    if (c.verdict === 'too-few') {
      out.push(
        `${head}: too few items for a verdict (${test} cannot go below p = ${Number(c.minP.toPrecision(3))} on ${c.items} item${c.items === 1 ? '' : 's'}).`,
      );
      return;
    }
    out.push(
      c.significant
        ? `${head} — a real difference (${test}, Holm-adjusted p = ${pValue(c.pHolm)}).`
        : `${head} — within noise (${test}, Holm-adjusted p = ${pValue(c.pHolm)}; interval of the difference ${ptsInterval(c.diff)} pts).`,
    );
  };
  lead('faithful@1', 'Faithful@1', (g) => g.faithful?.at1.estimate);
  lead('typecheck@1', 'Typecheck@1', (g) => g.typecheck?.at1.estimate);
  lead('beq@1', 'BEq+@1', (g) => g.beq?.at1.estimate);
  lead('f1', 'Retrieval F1', (g) => g.retrieval?.f1.estimate);
  const failed = groups.filter((g) => g.failedRuns > 0);
  if (failed.length > 0) out.push(`Failed runs (counted as failures): ${failed.map((g) => `${g.config} ${g.failedRuns}`).join(', ')}.`);
  const missing = groups.filter((g) => g.missingRuns > 0);
  if (missing.length > 0)
    out.push(`Missing from the predictions file (counted as failures): ${missing.map((g) => `${g.config} ${g.missingRuns}`).join(', ')}.`);
  const retried = data.retried?.filter((r) => r.runs > 0) ?? [];
  if (retried.length > 0)
    out.push(
      `Failed runs started again by \`driftline sweep retry\` (their records replace the failed ones): ${retried
        .map((r) => `${r.config} ${r.runs}${r.failedAgain ? ` (${r.failedAgain} failed again)` : ''}`)
        .join(', ')}.`,
    );
  return out;
}

export { num };

/** Unbiased pass@k per configuration and rate, for every k the samples support: shown when any
 * configuration has two or more samples per item. */
export function passAtKTable(data: ReportData): Table | null {
  const rows: Cell[][] = [];
  let maxK = 0;
  for (const g of data.metrics.configs) {
    for (const rate of RATES) {
      const curve = g[rate]?.passAtK ?? [];
      if (curve.length < 2) continue;
      maxK = Math.max(maxK, curve.length);
      rows.push([g.config, rateTitle(rate), String(g[rate]!.items), ...curve.map((p) => pctInterval(p.rate))]);
    }
  }
  if (rows.length === 0) return null;
  for (const row of rows) while (row.length < 3 + maxK) row.push('–');
  const header = ['configuration', 'rate', 'items', ...Array.from({ length: maxK }, (_, i) => `pass@${i + 1}`)];
  return {
    id: 'pass-at-k',
    title: 'pass@k',
    caption:
      `In %, the unbiased estimator: per item with n samples of which c succeed, 1 − C(n−c, k)/C(n, k), averaged over items, for k up to the fewest samples any item has; pass@n is "any of n". ` +
      `95% intervals over items: Wilson score where every item's value is 0 or 1, else percentile bootstrap (B = ${data.bootstrap.resamples}, seed ${data.bootstrap.seed}). Failed runs count as failed samples.`,
    header,
    rows,
    numeric: header.map((_, i) => i).filter((i) => i > 1),
  };
}
