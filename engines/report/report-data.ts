// Everything a sweep report shows, computed once from the run records: the JSON report, and
// what the HTML, Markdown and CSV renderings read. Pure.
import type { FactorialDesign, LeaveOutPolicy, SweepRunRecord } from '../../common/sweep';
import { DEFAULT_RESAMPLES, DEFAULT_SEED } from '../metrics/bootstrap';
import { repairBudgetCurves, stepBudgetCurves, type BudgetCurve } from '../metrics/budget-curve';
import { compareConfigurations, type PairedComparison } from '../metrics/compare';
import { designCells, factorialAnalysis, factorialResponses, type FactorialAnalysis } from '../metrics/factorial';
import { computeSweepMetrics, type SweepMetrics } from '../metrics/sweep-metrics';

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
}

export interface SweepReportInput {
  sweep: SweepReportMeta;
  records: readonly SweepRunRecord[];
  /** Base URL of the Temporal Web UI (e.g. http://localhost:8233); runs link to it. */
  temporalUiUrl?: string;
  /** Temporal namespace of the runs; default `default`. */
  namespace?: string;
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
}

/** The protocol a report's figures are read with (what ran on what, how intervals are made),
 * as label and value; labels without a value are left out. */
export function protocolRows(data: ReportData): [string, string][] {
  const s = data.sweep;
  const rows: [string, string | undefined][] = [
    ['sweep', s.id],
    ['status', s.status],
    ['benchmark', s.benchmark],
    ['library', s.library],
    ['index version', s.indexVersion],
    ['leave-out policy', s.leaveOut],
    ['samples per item', s.samples !== undefined ? String(s.samples) : undefined],
    ['items / runs', `${data.items} / ${data.runs}`],
    ['configurations', data.configs.join(', ')],
    ['intervals', `rates whose items each succeed or fail (one sample, and every @k): 95% Wilson score intervals, which hold at any n; other rates and means: 95% percentile bootstrap over items, B = ${data.bootstrap.resamples}, seed ${data.bootstrap.seed}`],
    ['tests', "rates: McNemar's exact test; retrieval F1: the paired sign-flip test, exact up to 20 items with differences, Monte Carlo beyond; Holm across pairs; no verdict where the test cannot reach p < 0.05 on the items at hand"],
    ['started', s.createdAt],
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
  };
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
