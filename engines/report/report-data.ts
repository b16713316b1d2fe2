// Everything a sweep report shows, computed once from the run records: the JSON report, and
// what the HTML, Markdown and CSV renderings read. Pure.
import { ranRecord, type FactorialDesign, type LeaveOutPolicy, type SweepOutcome, type SweepRunRecord } from '../../common/sweep';
import type { RefusedBy } from '../../common/lean-types';
import { DEFAULT_RESAMPLES, DEFAULT_SEED } from '../metrics/bootstrap';
import { repairBudgetCurves, stepBudgetCurves, type BudgetCurve } from '../metrics/budget-curve';
import { compareConfigurations, type PairedComparison } from '../metrics/compare';
import { designCells, factorialAnalysis, factorialResponses, type FactorialAnalysis } from '../metrics/factorial';
import { computeSweepMetrics, type SweepMetrics } from '../metrics/sweep-metrics';
import { judgeAgreement, rescoreLine, type JudgeAgreement, type RescoreMeta } from './judge-agreement';
import { costLine, sweepCost, type SweepCost } from './sweep-cost';
import { sentBatches, type SweepBatchCounts } from '../../common/llm-batch';
import { batchCountsText } from '../../common/sweep-batches-text';
import type { RunLlmCost } from '../results/llm-ledger';

/** What the sweep says about itself; every field but `id` is optional and shown when given. */
export interface SweepReportMeta {
  id: string;
  title?: string;
  status?: string;
  /** Benchmark file(s) or name, and the selection. */
  benchmark?: string;
  library?: string;
  /** The index version the sweep pinned. */
  indexVersion?: string;
  leaveOut?: LeaveOutPolicy;
  samples?: number;
  createdAt?: string;
  /** Named configurations as the sweep file gave them (shown verbatim). */
  configurations?: Record<string, unknown>;
  /** A 2^n design over the configurations: enables the factorial section. */
  design?: FactorialDesign;
  /** Free-form protocol notes (what was tuned on what, …). */
  notes?: string[];
  /** Per stage, the providers and models that answered the sweep's LLM calls (the ledger). */
  models?: { stage: string; provider: string; model: string; calls: number; cacheHits: number }[];
  /** driftline's version and commit that wrote the report. */
  software?: string;
  /** The screen's rules (statement-safety.ts SCREEN_VERSION). */
  screen?: string;
  /** Seeds besides the bootstrap's (the benchmark selection's), in words. */
  seeds?: string;
  /** Each item's informal statement, by item id (the item grid shows it). */
  informal?: Record<string, string>;
  /** A rescore: the sweep it judged again and the judge it asked (enables the judges'
   * side-by-side section). */
  rescore?: RescoreMeta;
}

export interface SweepReportInput {
  sweep: SweepReportMeta;
  records: readonly SweepRunRecord[];
  /** What each of the sweep's runs' LLM calls cost (the ledger's `sweepRunCosts`); the report
   * states the sweep's cost when given. */
  llmCosts?: readonly RunLlmCost[];
  /** The sweep's provider batches (batch mode: engines/results/llm-batches.ts); stated when it
   * sent any. */
  batches?: SweepBatchCounts;
  /** The Temporal Web UI (base URL, e.g. http://localhost:8233) and the runs' namespace; runs
   * link to it. Both come from the caller (client/runs.ts `temporalUiOf`, infra/config.ts): the
   * report has no default of its own. */
  temporalUi?: { base: string; namespace: string };
  /** Bootstrap resamples and seed (defaults 2000 and a fixed seed). */
  bootstrap?: { resamples?: number; seed?: number };
  /** Time stamp shown on the report; default now. */
  generatedAt?: string;
}

export interface ReportData {
  sweep: SweepReportMeta;
  generatedAt: string;
  bootstrap: { resamples: number; seed: number; level: number };
  /** Configurations in first-seen order. */
  configs: string[];
  items: number;
  runs: number;
  metrics: SweepMetrics;
  comparisons: PairedComparison[];
  repairCurves: BudgetCurve[];
  stepCurves: BudgetCurve[];
  factorial: FactorialAnalysis[];
  /** Why the factorial section is missing although a design was given. */
  factorialError?: string;
  /** Whether Lean ran at all, and who decided about the attempts. */
  lean: LeanSummary;
  /** When the last run finished (ISO), from the records. */
  finishedAt?: string;
  /** Runs per outcome, per configuration (configurations in `configs` order). `counts.refused`
   * holds every refused run; `refusedBy` those of them the screen did not refuse (a forged REPL
   * reply, a screen/Lean parse disagreement: holes found, decision 0017), absent when none. */
  outcomes: {
    config: string;
    counts: Partial<Record<SweepOutcome, number>>;
    refusedBy?: Partial<Record<RefusedBy, number>>;
    /** Runs whose equivalence check could not compare the statements (their definitions
     * differ): not equivalent for BEq+, never "not equivalent" in words; absent when none. */
    notComparable?: number;
  }[];
  /** A rescore: both judges side by side and their agreement per configuration. */
  judgeAgreement?: JudgeAgreement;
  /** Runs started again by `driftline sweep retry`, per configuration (`configs` order), and of
   * those how many failed again; absent when the sweep was never retried. */
  retried?: { config: string; runs: number; failedAgain: number }[];
  /** What the sweep's LLM calls cost, and what they would have cost sent one at a time (null
   * where a model has no price); absent when the report was not given the ledger. */
  cost?: SweepCost;
  /** Batch mode: the sweep's provider batches, the lines sent again after a failed or expired
   * batch or an error line, and those sent one at a time after their resubmissions ran out. */
  batches?: Omit<SweepBatchCounts, 'batches'>;
}

/** Who decided about the sweep's attempts: Lean, the screen before Lean, or nobody (no Lean). */
export interface LeanSummary {
  /** Attempts Lean checked (compiled, rejected or timed out). */
  byLean: number;
  /** Attempts the screen refused before Lean. */
  refused: number;
  /** Attempts refused because the REPL's reply was forged (tampering) or Lean could not parse
   * what the screen accepted (disagreement): Lean's REPL saw them; each is a hole found. */
  tampering: number;
  disagreement: number;
  /** Attempts not checked: no Lean configured. */
  skipped: number;
  attempts: number;
  /** Runs (not failed) whose last attempt Lean checked. */
  checkedRuns: number;
  runs: number;
  /** The summary line, e.g. "not configured, nothing was compiled". */
  line: string;
}

/** Outcomes in the order tables list them. */
export const OUTCOME_ORDER: readonly SweepOutcome[] = [
  'faithful',
  'unfaithful',
  'compiled',
  'not-compiled',
  'refused',
  'unchecked',
  'budget-exhausted',
  'failed',
  'missing',
];

/** Who decided each attempt. Records written before attempts carried a status are read from
 * the run's own fields (checked: Lean ran; outcome `refused`: the last one was refused). */
function attemptDecider(
  r: SweepRunRecord,
  a: SweepRunRecord['attempts'][number],
  last: boolean,
): 'lean' | 'refused' | 'skipped' | RefusedBy {
  if (a.status) return a.status === 'refused' ? (a.refusedBy ?? 'refused') : a.status === 'skipped' ? 'skipped' : 'lean';
  if (last && r.outcome === 'refused') return r.refusedBy ?? 'refused';
  return r.checked ? 'lean' : 'skipped';
}

export function leanSummary(records: readonly SweepRunRecord[]): LeanSummary {
  const ran = records.filter(ranRecord);
  const counts = { lean: 0, refused: 0, skipped: 0, tampering: 0, disagreement: 0 };
  for (const r of ran) r.attempts.forEach((a, i) => counts[attemptDecider(r, a, i === r.attempts.length - 1)]++);
  const holes = counts.tampering + counts.disagreement;
  const attempts = counts.lean + counts.refused + counts.skipped + holes;
  const checkedRuns = ran.filter((r) => r.checked).length;
  const s = (n: number) => (n === 1 ? '' : 's');
  const refusedPart = counts.refused > 0 ? `${counts.refused} attempt${s(counts.refused)} refused by the screen before Lean` : '';
  // Not the screen's refusals: Lean's REPL saw these texts, and each is a hole found.
  const holeParts = [
    ...(counts.tampering > 0 ? [`${counts.tampering} refused for tampering (the REPL's reply was forged)`] : []),
    ...(counts.disagreement > 0
      ? [`${counts.disagreement} refused because Lean could not parse what the screen accepted (a disagreement)`]
      : []),
  ];
  let line: string;
  if (ran.length === 0 || attempts === 0) line = 'never ran: no run reached a compile';
  else if (counts.lean === 0 && holes === 0 && counts.skipped > 0)
    line = `not configured, nothing was compiled${refusedPart ? ` (${refusedPart})` : ''}`;
  else if (counts.lean === 0 && holes === 0) line = `never ran: the screen refused every attempt before Lean (${attempts})`;
  else {
    const parts = [`ran on ${counts.lean} of ${attempts} attempts (the last attempt of ${checkedRuns} of ${ran.length} runs)`];
    if (refusedPart) parts.push(refusedPart);
    parts.push(...holeParts);
    if (counts.skipped > 0) parts.push(`${counts.skipped} not checked (no Lean configured)`);
    line = parts.join('; ');
  }
  return {
    byLean: counts.lean,
    refused: counts.refused,
    tampering: counts.tampering,
    disagreement: counts.disagreement,
    skipped: counts.skipped,
    attempts,
    checkedRuns,
    runs: ran.length,
    line,
  };
}

function outcomeCounts(records: readonly SweepRunRecord[], configs: readonly string[]): ReportData['outcomes'] {
  return configs.map((config) => {
    const counts: Partial<Record<SweepOutcome, number>> = {};
    const refusedBy: Partial<Record<RefusedBy, number>> = {};
    let notComparable = 0;
    for (const r of records) {
      if (r.config !== config) continue;
      counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
      if (r.outcome === 'refused' && r.refusedBy) refusedBy[r.refusedBy] = (refusedBy[r.refusedBy] ?? 0) + 1;
      if (r.notComparable) notComparable++;
    }
    return {
      config,
      counts,
      ...(Object.keys(refusedBy).length > 0 ? { refusedBy } : {}),
      ...(notComparable > 0 ? { notComparable } : {}),
    };
  });
}

/** The protocol a report's figures are read with (what ran on what, how intervals are made),
 * as label and value; labels without a value are left out. */
export function protocolRows(data: ReportData): [string, string][] {
  const s = data.sweep;
  const rows: [string, string | undefined][] = [
    ['sweep', s.id],
    ['status', s.status],
    ['rescore', s.rescore ? rescoreLine(s.rescore) : undefined],
    ['benchmark', s.benchmark],
    ['library', s.library],
    ['index version', s.indexVersion],
    ['leave-out policy', s.leaveOut],
    ['samples per item', s.samples !== undefined ? String(s.samples) : undefined],
    ['items / runs', `${data.items} / ${data.runs}`],
    ['Lean', data.lean.line],
    ['LLM cost', data.cost ? costLine(data.cost) : undefined],
    ['LLM batches', data.batches ? batchCountsText({ ...data.batches, batches: [] }) : undefined],
    ['screen', s.screen],
    [
      'models',
      s.models?.length
        ? s.models.map((m) => `${m.stage}: ${m.provider}/${m.model} (${m.calls} calls, ${m.cacheHits} from the cache)`).join('; ')
        : undefined,
    ],
    ['configurations', data.configs.join(', ')],
    [
      'intervals',
      `rates whose items each succeed or fail (one sample, and every @k): 95% Wilson score intervals, which hold at any n; other rates and means: 95% percentile bootstrap over items, B = ${data.bootstrap.resamples}, seed ${data.bootstrap.seed}`,
    ],
    [
      'tests',
      "rates: McNemar's exact test; retrieval F1: the paired sign-flip test, exact up to 20 items with differences, Monte Carlo beyond; Holm across pairs; no verdict where the test cannot reach p < 0.05 on the items at hand",
    ],
    ['seeds', `bootstrap ${data.bootstrap.seed}${s.seeds ? `; ${s.seeds}` : ''}`],
    ['driftline', s.software],
    ['started', s.createdAt],
    ['last run finished', data.finishedAt],
    ['generated', data.generatedAt],
  ];
  return rows.filter((row): row is [string, string] => row[1] !== undefined && row[1] !== '');
}

/** The Temporal Web UI page of a run. */
export function temporalRunUrl(base: string, namespace: string, workflowId: string): string {
  return `${base.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export function buildReportData(input: SweepReportInput): ReportData {
  const resamples = input.bootstrap?.resamples ?? DEFAULT_RESAMPLES;
  const seed = input.bootstrap?.seed ?? DEFAULT_SEED;
  const opts = { resamples, seed };
  const records = input.records;
  const metrics = computeSweepMetrics(records, opts);
  const data: ReportData = {
    sweep: input.sweep,
    generatedAt: input.generatedAt ?? new Date().toISOString(),
    bootstrap: { resamples, seed, level: 0.95 },
    configs: metrics.configs.map((c) => c.config),
    items: new Set(records.map((r) => r.item)).size,
    runs: records.length,
    metrics,
    comparisons: compareConfigurations(records, opts),
    repairCurves: repairBudgetCurves(records),
    stepCurves: stepBudgetCurves(records),
    factorial: [],
    lean: leanSummary(records),
    outcomes: [],
  };
  data.outcomes = outcomeCounts(records, data.configs);
  if (input.llmCosts) data.cost = sweepCost(input.llmCosts, records, data.configs);
  if (input.batches && sentBatches(input.batches)) {
    const { batches: _inFlight, ...counts } = input.batches;
    data.batches = counts;
  }
  if (input.sweep.rescore) data.judgeAgreement = judgeAgreement(records, input.sweep.rescore, opts);
  if (records.some((r) => r.retryRound))
    data.retried = data.configs.map((config) => {
      const again = records.filter((r) => r.config === config && r.retryRound);
      return { config, runs: again.length, failedAgain: again.filter((r) => r.outcome === 'failed').length };
    });
  const finished = records
    .map((r) => r.finishedAt)
    .filter(Boolean)
    .sort();
  if (finished.length > 0) data.finishedAt = finished[finished.length - 1];
  const design = input.sweep.design;
  if (design) {
    try {
      const cells = designCells(design, new Set(data.configs));
      data.factorial = factorialResponses(records, cells).map((response) => factorialAnalysis(records, design, response, opts));
    } catch (e) {
      data.factorialError = (e as Error).message;
    }
  }
  return data;
}
