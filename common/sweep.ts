// Types shared by the sweep workflow, the results database, the metrics and the report.
// This module imports only types, so the workflow bundle can use it safely.
import type { CompileStatus, RefusedBy } from './lean-types';
import type { LlmCallPolicy } from './llm-call-policy';
import type { LeaveOutPolicy } from './retrieval-types';
import type { RunConfig } from './run-config-schema';
import type { FormalizeResult, Outcome, Stage } from './run-types';
import type { RejudgeResult, SweepRescore } from './rescore';
import { etaSeconds } from './sweep-rate';

/** How a sweep hides an item's own neighbourhood from retrieval (defined with FormalizeInput). */
export type { LeaveOutPolicy } from './retrieval-types';

/** The outcome of one sweep run: a formalize outcome (`refused`: the screen refused the last
 * attempt before Lean; `refusal` says why), `failed` (the child failed after the sweep's
 * retries; `error` says why), `budget-exhausted` (a step/token/time budget ran out), or
 * `missing` (a predictions configuration whose file has no statement for the unit: nothing
 * ran; it counts as a failure of every rate). */
export type SweepOutcome = Outcome | 'failed' | 'budget-exhausted' | 'missing';

/** Whether a record describes a run that happened (not `failed`, not `missing`): what latency,
 * repair and retrieval figures are computed over. */
export function ranRecord(r: Pick<SweepRunRecord, 'outcome'>): boolean {
  return r.outcome !== 'failed' && r.outcome !== 'missing';
}

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
  /** BEq+-style equivalence with the gold statement; null when it did not run or could not
   * compare (then `notComparable`). */
  equivalent: boolean | null;
  /** The equivalence check could not compare the two without one's definitions reaching the
   * other: nothing was proved either way (counts as not equivalent in BEq+, shown apart). */
  notComparable?: true;
  /** The judge's grade 0..10; null when the judge did not run. */
  judgeGrade: number | null;
  /** compiled ∧ grade ≥ threshold; null when the judge did not run. */
  faithful: boolean | null;
  /** Compile result per round, in order (round 0 = first attempt): the repair-budget curve;
   * `status` says who decided (Lean, the screen's `refused`, or `skipped`: no Lean); records
   * written before it was kept lack it. */
  attempts: { round: number; compiled: boolean; status?: CompileStatus; refusedBy?: RefusedBy }[];
  /** Outcome `refused`: the reason the last attempt was refused (the screen's, before Lean,
   * unless `refusedBy` says otherwise). */
  refusal?: string;
  /** Outcome `refused` not by the screen: the REPL's reply was forged (`tampering`) or Lean could
   * not parse what the screen accepted (`disagreement`). Each is a hole found, not a screen
   * refusal (decision 0017); absent: the screen refused. */
  refusedBy?: RefusedBy;
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
  /** Tokens and US dollars of the run's LLM calls (cache hits cost nothing). */
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number; costUsd?: number };
  /** The run's LLM calls answered from the reply cache, and those sent to a provider. */
  cache?: { hits: number; misses: number };
  formalStatement: string;
  /** Why the run failed, for `failed` records. */
  error?: string;
  /** Copied by `--reuse` from this run of an earlier sweep. */
  reusedFrom?: string;
  /** `predictions`: the statement was read from a predictions file (no formalize, retrieval or
   * repair ran); absent: driftline generated it. */
  source?: 'predictions';
  /** A rescore's record: the source unit re-judged (its workflow ID), and the source judge's
   * verdict beside this one (`judgeGrade`, `faithful`); null where the source was not judged. */
  rescoreOf?: string;
  sourceJudgeGrade?: number | null;
  sourceFaithful?: boolean | null;
  /** Why the judge did not run again (the source's outcome is carried). */
  carried?: string;
  /** The `driftline sweep retry` round (1 for the first) that ran this unit again and wrote
   * this record in place of its failed one; absent for a unit the sweep ran once. */
  retryRound?: number;
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

// ---- Benchmarks, sweep plans and the sweep workflow's contract ----

/** One benchmark item, whatever file format it came from. */
export interface BenchmarkItem {
  /** Unique within the benchmark (ConNF/ProofNet `full_name`, miniF2F `name`). */
  id: string;
  informal: string;
  /** The reference Lean statement, when the benchmark has one. */
  goldStatement?: string;
  goldPremises: string[];
  /** Imports and `open` lines the gold statement is written under. */
  header?: string;
  /** domain, split, source, … */
  tags: Record<string, string>;
}

/** A configuration cell of a sweep: its name and the run configuration it stands for. */
export interface SweepCell {
  name: string;
  /** The same object the API's `config` field takes (partial; defaults fill the rest). */
  config: Partial<RunConfig>;
  /** See SweepRunRecord.configHash. */
  hash: string;
  /** For cells of a factorial design: factor → level (e.g. `{ decompose: 'on' }`). */
  factors?: Record<string, string>;
  /** A predictions configuration: its statements come from a file, stored in the results
   * database when the sweep started (engines/sweeps/predictions.ts); the sha256 of the file and
   * how many statements it gave the sweep's units. Only the judge settings of `config` apply. */
  predictionsFile?: PredictionsCell;
}

/** What the sweep workflow knows of a predictions configuration (the statements stay in the
 * results database and are fetched a page at a time). */
export interface PredictionsCell {
  sha256: string;
  /** Statements stored for the sweep's units (the rest are recorded `missing`). */
  statements: number;
}

/** One stored prediction: the statement for a unit of a predictions configuration. */
export interface UnitPrediction {
  /** The item's position in the sweep (0-based). */
  ord: number;
  sample: number;
  statement: string;
}

/** `budget-exhausted`: the sweep's LLM budget was reached; it started no run after that, let the
 * running ones finish, and ended with the rest not run. */
export type SweepStatus = 'running' | 'paused' | 'completed' | 'cancelled' | 'failed' | 'budget-exhausted';

/** A sweep's LLM budget, over every call of its runs (the ledger's sweep totals). */
export interface SweepBudget {
  tokens?: number;
  costUsd?: number;
}

/** What a sweep's runs used so far, and the budget, when it has one. */
export interface SweepBudgetState extends SweepBudget {
  used: { tokens: number; costUsd?: number };
  /** Why no more runs start (absent while within budget). */
  reached?: string;
}

/** Counts per configuration: finished runs, of which failed, and children in flight. */
export interface SweepCounts {
  total: number;
  done: number;
  failed: number;
  running: number;
  /** Units started again by `driftline sweep retry` (each counted once, however many times);
   * present once the sweep has been retried. */
  retried?: number;
}

/** A configuration's rate: its finished runs over the sweep's active time (common/sweep-rate.ts),
 * which is its share of the sweep's rate, so the configurations' rates add up to it; and the time
 * its remaining runs take at that rate (0 when none are left, null before any ran). */
export function configRate(p: Pick<SweepProgress, 'rate' | 'done'>, c: SweepCounts): { rate: number; etaSeconds: number | null } {
  const rate = p.done > 0 ? (p.rate * c.done) / p.done : 0;
  return { rate, etaSeconds: etaSeconds(c.total - c.done, rate) };
}

/** What the `progress` query answers (and `sweep status --json` prints). */
export interface SweepProgress extends SweepCounts {
  sweepId: string;
  status: SweepStatus;
  perConfig: Record<string, SweepCounts>;
  /** Failed child attempts that are being retried by the sweep's policy. */
  retries: number;
  /** Units started again by `driftline sweep retry` (once the sweep has been retried). */
  retried?: number;
  /** Finished runs (failed ones included) per second of unpaused time since the sweep started
   * (common/sweep-rate.ts); 0 when read from the results database (a closed sweep's history gone). */
  rate: number;
  /** Seconds to go at that rate; null before the first run finishes. */
  etaSeconds: number | null;
  /** How many times the sweep workflow continued as new. */
  generation: number;
  startedAt: string;
  /** The sweep's LLM budget and what was used of it (sweeps with a budget only). */
  budget?: SweepBudgetState;
}

/** A unit to start (or started) and its attempt (1-based). `last`: the attempt after which a
 * failure is final (default the sweep's `maxAttempts`; a retried unit counts on from the
 * attempts it had). */
export interface UnitAttempt {
  unit: number;
  attempt: number;
  last?: number;
}

/** Where the sweep workflow is, carried across continueAsNew: a cursor, counters, and the
 * units started but not yet recorded (at most `window` of them). */
export interface SweepCursor {
  /** Next unit index to start, in order. */
  next: number;
  /** Started in an earlier run and not yet recorded: unit index and attempt. */
  inflight: UnitAttempt[];
  /** Failed attempts waiting to be retried (and, in a retry round, the failed units). */
  retryQueue: UnitAttempt[];
  done: Record<string, number>;
  failed: Record<string, number>;
  retries: number;
  paused: boolean;
  /** Milliseconds spent unpaused before this run, and when the sweep started (ISO). */
  activeMs: number;
  startedAt: string;
  /** How many times the sweep has continued as new. */
  generation: number;
  /** What the sweep's runs used so far and whether the budget is reached (with a budget). */
  budget?: { used: { tokens: number; costUsd?: number }; reached?: string };
  /** Set by `driftline sweep retry`: this run starts only the units in `retryQueue` (`next` is
   * past the end), each replacing its unit's failed record. */
  retry?: SweepRetryRound;
}

/** A `driftline sweep retry` round of a finished sweep. */
export interface SweepRetryRound {
  /** 1 for the sweep's first retry, then 2, …: written on each record the round replaces. */
  round: number;
  /** Units retried so far per configuration, this round's included (each unit once). */
  retried: Record<string, number>;
  /** The sweep ended cancelled before every unit ran: it stays `cancelled` after the retry. */
  incomplete?: boolean;
}

/** What `driftline sweep retry` hands the sweep workflow (client/sweep-retry.ts): the failed
 * units by their coordinates and the counters it read from the results database; the workflow's
 * ledger makes its cursor from it (common/sweep-ledger.ts). */
export interface SweepRetryRequest {
  /** 1 for the sweep's first retry, then 2, … */
  round: number;
  /** The failed units: item position in the sweep (0-based), configuration, sample, and the
   * attempts the unit had before (its attempts count on from them). */
  units: { item: number; cell: string; sample: number; attemptsBefore: number }[];
  /** Recorded runs per configuration, of which failed, and units retried so far (this round's
   * included, each unit once). */
  counts: Record<string, { done: number; failed: number; retried: number }>;
  /** The sweep's failed child attempts retried by its policy so far. */
  retries: number;
  /** Unpaused milliseconds the sweep ran so far, and when it started (ISO): its rate stays its own. */
  activeMs: number;
  startedAt: string;
  /** The sweep ended cancelled before every unit ran: it stays `cancelled` after the retry. */
  incomplete?: boolean;
}

/** What the sweep workflow is started with. Units are ordered item-major, then configuration,
 * then sample: unit u is item ⌊u/(C·K)⌋, configuration ⌊u/K⌋ mod C, sample u mod K. */
export interface SweepInput {
  sweepId: string;
  library: string;
  items: number;
  cells: SweepCell[];
  samples: number;
  window: number;
  /** Attempts per unit, the first included (a failed child is retried up to attempts − 1 times). */
  maxAttempts: number;
  leaveOut: LeaveOutPolicy;
  /** The index version pinned for the sweep, when known at start. */
  indexVersion?: string;
  /** Task queues the children run on (default: the production ones). */
  taskQueue?: string;
  leanTaskQueue?: string;
  /** The workers' LLM settings, handed to every child (they size the LLM activities' timeouts). */
  llm?: LlmCallPolicy;
  /** Continue as new once the history has this many events (default 4000). */
  historyLimit?: number;
  /** Cells whose results were copied from an earlier sweep (`--reuse`): their units are done. */
  reusedCells?: string[];
  /** No run starts once the sweep's LLM calls reach this (tokens and/or USD). */
  budget?: SweepBudget;
  /** A rescore of a finished sweep: every unit is a `rejudge` of the source's record. */
  rescore?: SweepRescore;
  /** Set by continueAsNew (and, before the retry request, by `driftline sweep retry`). */
  cursor?: SweepCursor;
  /** Set by `driftline sweep retry`: start a retry round of the failed units (a carried cursor
   * wins over it, so a retry round that continued as new goes on from its cursor). */
  retryRound?: SweepRetryRequest;
}

/** What a unit's record activity hands back to the workflow: only what the counters need. */
export interface RecordedRun {
  workflowId: string;
  outcome: SweepOutcome;
  /** false: the child has not finished yet (only when asked not to wait). */
  finished: boolean;
  /** The child failed (this attempt); `error` says why. */
  failedAttempt?: boolean;
  /** No run with this workflow ID exists (it was never started). */
  missing?: boolean;
  error?: string;
  /** The sweep's LLM totals after this record (when asked, for a sweep with a budget). */
  totals?: { tokens: number; costUsd?: number };
}

/** What the record activity is asked to write for one unit. */
export interface RecordRunInput {
  sweepId: string;
  workflowId: string;
  cell: Pick<SweepCell, 'name' | 'hash'>;
  item: Pick<BenchmarkItem, 'id' | 'goldPremises' | 'tags'>;
  sample: number;
  /** 1-based attempt of this unit. */
  attempt: number;
  /** No retry follows: a failure is recorded as the unit's final, failed record. */
  lastAttempt: boolean;
  /** A `driftline sweep retry` round: the unit's failed record is replaced (once per round). */
  retryRound?: number;
  /** The child's failure, when the workflow saw it fail. */
  failure?: string;
  /** The child's result, when the workflow saw it complete; with neither, the activity reads
   * the outcome from Temporal (a child started by an earlier run of the sweep). */
  result?: FormalizeResult | RejudgeResult;
  /** A predictions configuration's file has no statement for this unit: no child ran; the
   * activity writes the unit's `missing` record. */
  missingPrediction?: boolean;
  /** How long to wait for a child that is still running (0: answer at once). */
  waitMs?: number;
  /** Also answer the sweep's LLM totals so far (a sweep with a budget). */
  totals?: boolean;
}

/** Activities of the sweep workflow (main task queue). */
export interface SweepActivities {
  sweepItems(input: { sweepId: string; from: number; count: number }): Promise<BenchmarkItem[]>;
  recordSweepRun(input: RecordRunInput): Promise<RecordedRun>;
  /** The stored predictions of a predictions configuration for items `from` … `from + count − 1`
   * (by sweep order), every sample. */
  sweepPredictions(input: { sweepId: string; config: string; from: number; count: number }): Promise<UnitPrediction[]>;
}
