// Types shared by the sweep workflow, the results database, the metrics and the report.
// This module imports only types, so the workflow bundle can use it safely.
import type { Outcome, Stage } from './types';

/** How a sweep hides an item's own neighbourhood from retrieval (defined with FormalizeInput). */
export type { LeaveOutPolicy } from './types';

/** The outcome of one sweep run: a formalize outcome, `failed` (the child failed after the
 * sweep's retries; `error` says why), or `budget-exhausted` (a step/token/time budget ran out). */
export type SweepOutcome = Outcome | 'failed' | 'budget-exhausted';

/** One finished (configuration, item, sample) of a sweep: the row the results database holds,
 * written once, keyed by `workflowId`. Metrics and reports are computed from these alone. */
export interface SweepRunRecord {
  sweepId: string;
  /** Name of the configuration cell. */
  config: string;
  /** Hash of everything in the cell that affects results (configuration, library, index
   * version, leave-out policy): what `--reuse` matches on. */
  configHash: string;
  item: string;
  /** 0-based sample index. */
  sample: number;
  /** The child workflow's ID, `<sweepId>/<config>/<item>/<sample>`: the primary key. */
  workflowId: string;
  outcome: SweepOutcome;
  compiled: boolean;
  /** false when no Lean checked the statement. */
  checked: boolean;
  /** BEq+-style equivalence with the gold statement; null when it did not run. */
  equivalent: boolean | null;
  /** The judge's grade 0..10; null when the judge did not run. */
  judgeGrade: number | null;
  /** compiled ∧ grade ≥ threshold; null when the judge did not run. */
  faithful: boolean | null;
  /** Compile result per round, in order (round 0 = first attempt): the repair-budget curve. */
  attempts: { round: number; compiled: boolean }[];
  /** Repair rounds used (attempts − 1). */
  repairRounds: number;
  /** Agent mode: steps taken, and the step at which the working file first compiled. */
  agentSteps?: number;
  compiledAtStep?: number | null;
  /** Retrieved premise names, in rank order. */
  premises: string[];
  goldPremises: string[];
  /** Whether the item has a gold formal statement (BEq+ counts only such items); absent means
   * yes. */
  hasGoldStatement?: boolean;
  /** Item tags (domain, split, source, …). */
  tags: Record<string, string>;
  /** Wall-clock milliseconds spent per stage, summed over repair rounds. */
  stageMs: Partial<Record<Stage, number>>;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number; costUsd?: number };
  formalStatement: string;
  /** Why the run failed, for `failed` records. */
  error?: string;
  /** ISO time the record was written. */
  finishedAt: string;
}

/** A 2^n factorial design over a sweep's configurations: each factor has a low (0) and a high
 * (1) level, and each cell (a configuration name) sets every factor. The report computes main
 * effects and interactions from it. */
export interface FactorialDesign {
  /** In display order; `low`/`high` describe the levels in words (e.g. `off`/`on`). */
  factors: { name: string; low?: string; high?: string }[];
  /** Configuration name → factor name → level. */
  cells: Record<string, Record<string, 0 | 1>>;
}
