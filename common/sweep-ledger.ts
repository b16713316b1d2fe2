// The sweep's bookkeeping as plain code: which unit is which (its index, its configuration,
// item and sample, its child's workflow ID), which unit starts next (retries first, reused
// cells skipped), what is running, the counters and the budget, pause and cancel, the status
// the `progress` query answers, and the cursor carried across continueAsNew. The sweep workflow
// (workflows/sweep.ts) is a shell around it: it starts children and records them, and tells the
// ledger what happened. Deterministic: the caller passes the time (the workflow's clock), and
// it imports only deterministic code, so the workflow bundle can use it.
import { etaSeconds, runsPerSecond } from './sweep-rate';
import { predictionsDomain } from './trust-domain';
import { LEAN_TASK_QUEUE } from './activities';
import { rejudgeInput, type RejudgeInput } from './rescore';
import { resolveRunConfig, workflowTypeFor } from './run-config';
import type { EvaluateStatementInput, FormalizeInput } from './run-types';
import type {
  BenchmarkItem,
  RecordedRun,
  RecordRunInput,
  SweepCell,
  SweepCounts,
  SweepCursor,
  SweepInput,
  SweepProgress,
  SweepRetryRequest,
  UnitAttempt,
} from './sweep';

/** A unit's coordinates: unit u is item ⌊u/(C·K)⌋, configuration ⌊u/K⌋ mod C, sample u mod K. */
export interface UnitCoordinates {
  item: number;
  cell: SweepCell;
  sample: number;
}

type Shape = Pick<SweepInput, 'cells' | 'samples'>;

export function decodeUnit(input: Shape, unit: number): UnitCoordinates {
  const C = input.cells.length;
  const K = input.samples;
  return { item: Math.floor(unit / (C * K)), cell: input.cells[Math.floor(unit / K) % C]!, sample: unit % K };
}

/** The unit index of (item, configuration, sample); undefined when the configuration is not a
 * cell of the sweep or the sample is out of range. */
export function encodeUnit(input: Shape, item: number, cell: string, sample: number): number | undefined {
  const c = input.cells.findIndex((x) => x.name === cell);
  if (c < 0 || !Number.isInteger(item) || item < 0 || !Number.isInteger(sample) || sample < 0 || sample >= input.samples) return undefined;
  return (item * input.cells.length + c) * input.samples + sample;
}

/** The child workflow ID of a unit: `<sweep>/<config>/<item>/<sample>` (the record's key). */
export function unitWorkflowId(sweepId: string, cell: string, itemId: string, sample: number): string {
  return `${sweepId}/${cell}/${itemId}/${sample}`;
}

export function totalUnits(input: Pick<SweepInput, 'items' | 'cells' | 'samples'>): number {
  return input.items * input.cells.length * input.samples;
}

/** What a unit runs: a child workflow of this type with these arguments, or nothing (a
 * predictions configuration's file has no statement for the unit). */
export type UnitChoice = { type: string; args: FormalizeInput | EvaluateStatementInput | RejudgeInput } | { missing: true };

/** The child a unit runs: a generated run (`formalize`, or `formalizeAgent` for agent cells);
 * for a predictions configuration, `evaluateStatement` of the file's `prediction` (`missing`
 * when the file has none); in a rescore, `rejudge` of the source's record of the unit. */
export function unitChildFor(input: SweepInput, cell: SweepCell, item: BenchmarkItem, sample: number, prediction?: string): UnitChoice {
  const config = resolveRunConfig(cell.config);
  const leanTaskQueue = input.leanTaskQueue ?? LEAN_TASK_QUEUE;
  const gold = item.goldStatement ? { goldStatement: item.goldStatement } : {};
  const llm = input.llm ? { llm: input.llm } : {};
  // A rescore: the source's record of the same unit, judged again.
  if (input.rescore) {
    const args = rejudgeInput(input.rescore, {
      sweepId: input.sweepId,
      cell: cell.name,
      itemId: item.id,
      sample,
      statement: item.informal,
      library: input.library,
      config,
      leanTaskQueue,
      ...gold,
      ...llm,
    });
    return { type: 'rejudge', args };
  }
  if (cell.predictionsFile) {
    if (prediction === undefined) return { missing: true };
    // No retrieval, so no exclusions, gold premises or index version: the statement is given.
    const evaluate: EvaluateStatementInput = {
      statement: item.informal,
      formalStatement: prediction,
      library: input.library,
      config,
      leanTaskQueue,
      ...gold,
      ...llm,
      ...(sample ? { sample } : {}),
      // One predictions file is one trust domain: its texts never share a REPL with others'.
      trustDomain: predictionsDomain(input.sweepId, cell.name),
    };
    return { type: 'evaluateStatement', args: evaluate };
  }
  const child: FormalizeInput = {
    statement: item.informal,
    library: input.library,
    config,
    // The item's own declaration is never retrieved or shown; with leave-out `file`, neither
    // is any theorem of its source file (definitions stay retrievable).
    exclude: [item.id],
    leaveOut: input.leaveOut,
    goldPremises: item.goldPremises,
    leanTaskQueue,
    ...gold,
    ...(input.indexVersion ? { indexVersion: input.indexVersion } : {}),
    ...llm,
    // k samples of an item are k different LLM cache entries (and the same k on a re-run).
    ...(sample ? { sample } : {}),
  };
  return { type: workflowTypeFor(config), args: child };
}

/** A new sweep's cursor: nothing started; reused cells count as done. */
export function freshCursor(input: SweepInput, now: number): SweepCursor {
  const perCell = input.items * input.samples;
  const done: Record<string, number> = {};
  const failed: Record<string, number> = {};
  for (const cell of input.cells) {
    done[cell.name] = input.reusedCells?.includes(cell.name) ? perCell : 0;
    failed[cell.name] = 0;
  }
  return {
    next: 0,
    inflight: [],
    retryQueue: [],
    done,
    failed,
    retries: 0,
    paused: false,
    activeMs: 0,
    startedAt: new Date(now).toISOString(),
    generation: 0,
  };
}

/** The cursor of a `driftline sweep retry` round: only the failed units are queued (in unit
 * order), each counting its attempts on from those it had; the counters are the database's
 * (a retried unit stays done and failed until its new record replaces the failed one). */
export function retryCursor(input: SweepInput, request: SweepRetryRequest): SweepCursor {
  const queue: UnitAttempt[] = request.units.map((u) => {
    const unit = encodeUnit(input, u.item, u.cell, u.sample);
    if (unit === undefined) throw new Error(`sweep ${input.sweepId}: ${u.cell}/${u.item}/${u.sample} is not a unit of the sweep`);
    return { unit, attempt: u.attemptsBefore + 1, last: u.attemptsBefore + input.maxAttempts };
  });
  queue.sort((a, b) => a.unit - b.unit);
  const done: Record<string, number> = {};
  const failed: Record<string, number> = {};
  const retried: Record<string, number> = {};
  for (const cell of input.cells) {
    const c = request.counts[cell.name] ?? { done: 0, failed: 0, retried: 0 };
    done[cell.name] = c.done;
    failed[cell.name] = c.failed;
    retried[cell.name] = c.retried;
  }
  return {
    next: totalUnits(input),
    inflight: [],
    retryQueue: queue,
    done,
    failed,
    retries: request.retries,
    paused: false,
    activeMs: request.activeMs,
    startedAt: request.startedAt,
    generation: 0,
    retry: { round: request.round, retried, ...(request.incomplete ? { incomplete: true } : {}) },
  };
}

/** What a recorded attempt means for the sweep: queued again (`retry`), counted, or left unrun
 * (a failed attempt past the sweep's budget). */
export type AttemptEnd = 'retry' | 'counted' | 'unrun';

export class SweepLedger {
  readonly total: number;
  /** Units started and not yet recorded, with their attempt. */
  readonly running = new Map<number, UnitAttempt>();
  private readonly reused: Set<string>;
  private cancelled = false;
  private finished = false;
  /** When the current unpaused stretch began (workflow time). */
  private stretchStart: number;

  constructor(
    readonly input: SweepInput,
    readonly cursor: SweepCursor,
    now: number,
  ) {
    this.total = totalUnits(input);
    this.reused = new Set(input.reusedCells ?? []);
    this.stretchStart = now;
  }

  /** The ledger of a workflow run: the cursor carried over, a retry round's, or a fresh one. */
  static start(input: SweepInput, now: number): SweepLedger {
    const cursor = input.cursor ?? (input.retryRound ? retryCursor(input, input.retryRound) : freshCursor(input, now));
    return new SweepLedger(input, cursor, now);
  }

  decode(unit: number): UnitCoordinates {
    return decodeUnit(this.input, unit);
  }

  workflowId(unit: number, itemId: string): string {
    const { cell, sample } = this.decode(unit);
    return unitWorkflowId(this.input.sweepId, cell.name, itemId, sample);
  }

  /** What the record activity is told of an attempt of `unit` on item `item`. */
  recordInput(attempt: UnitAttempt, item: RecordRunInput['item']): RecordRunInput {
    const { cell, sample } = this.decode(attempt.unit);
    return {
      sweepId: this.input.sweepId,
      workflowId: unitWorkflowId(this.input.sweepId, cell.name, item.id, sample),
      cell: { name: cell.name, hash: cell.hash },
      item,
      sample,
      attempt: attempt.attempt,
      lastAttempt: attempt.attempt >= (attempt.last ?? this.input.maxAttempts),
      // A retry round replaces the unit's failed record instead of keeping the first one.
      ...(this.cursor.retry ? { retryRound: this.cursor.retry.round } : {}),
    };
  }

  /** Units started by an earlier run and not yet recorded: they are awaited, not started. */
  takeInflight(): UnitAttempt[] {
    const carried = this.cursor.inflight;
    this.cursor.inflight = [];
    return carried;
  }

  get paused(): boolean {
    return this.cursor.paused;
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  budgetReached(): boolean {
    return Boolean(this.cursor.budget?.reached);
  }

  /** Whether another unit may start now (not paused, within the budget and the window). */
  mayStart(): boolean {
    return !this.cursor.paused && !this.budgetReached() && this.running.size < this.input.window;
  }

  /** The next attempt to start: a failed attempt's retry first, then the next unit not in a
   * reused cell; undefined when none is left. */
  next(): UnitAttempt | undefined {
    const retry = this.cursor.retryQueue.shift();
    if (retry) return retry;
    while (this.cursor.next < this.total) {
      const unit = this.cursor.next++;
      if (!this.reused.has(this.decode(unit).cell.name)) return { unit, attempt: 1 };
    }
    return undefined;
  }

  started(attempt: UnitAttempt): void {
    this.running.set(attempt.unit, attempt);
  }

  /** Nothing running and nothing left to start (or the budget is reached). */
  isDone(): boolean {
    return this.running.size === 0 && ((this.cursor.retryQueue.length === 0 && this.cursor.next >= this.total) || this.budgetReached());
  }

  /** Books a recorded attempt (its totals noted first, with noteTotals): a failed attempt with attempts left is queued again (unless the
   * budget is reached: then the unit stays unrun, like the rest); otherwise the unit counts. */
  recorded(attempt: UnitAttempt, record: RecordRunInput, recorded: RecordedRun): AttemptEnd {
    const { cell } = this.decode(attempt.unit);
    const name = cell.name;
    this.running.delete(attempt.unit);
    const c = this.cursor;
    if (recorded.failedAttempt && !record.lastAttempt) {
      if (this.budgetReached()) return 'unrun';
      c.retries++;
      c.retryQueue.push({
        unit: attempt.unit,
        attempt: attempt.attempt + 1,
        ...(attempt.last !== undefined ? { last: attempt.last } : {}),
      });
      return 'retry';
    }
    if (c.retry) {
      // A retried unit's failed record counted it done and failed already; its new record
      // replaces that one, so only a success moves a counter.
      if (recorded.outcome !== 'failed') c.failed[name] = Math.max(0, (c.failed[name] ?? 0) - 1);
    } else {
      c.done[name] = (c.done[name] ?? 0) + 1;
      if (recorded.outcome === 'failed') c.failed[name] = (c.failed[name] ?? 0) + 1;
    }
    return 'counted';
  }

  /** The sweep's LLM budget: the record activity answers the sweep's totals after each run; once
   * they reach the budget no unit starts any more. Answers why, when this call reached it. */
  noteTotals(totals: RecordedRun['totals']): string | undefined {
    const b = this.input.budget;
    if (!b || !totals) return undefined;
    const before = this.cursor.budget?.reached;
    const reached =
      before ??
      (b.tokens !== undefined && totals.tokens >= b.tokens
        ? `token budget reached: ${totals.tokens} tokens used of ${b.tokens}`
        : b.costUsd !== undefined && (totals.costUsd ?? 0) >= b.costUsd
          ? `cost budget reached: $${(totals.costUsd ?? 0).toFixed(4)} used of $${b.costUsd}`
          : undefined);
    this.cursor.budget = { used: totals, ...(reached ? { reached } : {}) };
    return before ? undefined : reached;
  }

  /** Pause: the unpaused time so far is banked. Answers whether anything changed. */
  pause(now: number): boolean {
    if (this.cursor.paused || this.cancelled) return false;
    this.cursor.activeMs += now - this.stretchStart;
    this.cursor.paused = true;
    return true;
  }

  resume(now: number): boolean {
    if (!this.cursor.paused) return false;
    this.cursor.paused = false;
    this.stretchStart = now;
    return true;
  }

  cancel(): void {
    this.cancelled = true;
  }

  /** The sweep ran to its end: the time is banked and the status is final. */
  finish(now: number): void {
    this.cursor.activeMs = this.activeMs(now);
    this.cursor.paused = false;
    this.finished = true;
  }

  /** Unpaused milliseconds so far; a finished sweep's clock has stopped (the workflow before
   * the ledger counted its last stretch twice in its final answer). */
  activeMs(now: number): number {
    if (this.finished) return this.cursor.activeMs;
    return this.cursor.activeMs + (this.cursor.paused ? 0 : now - this.stretchStart);
  }

  /** The cursor the next run continues from: the running units become its in-flight ones. */
  carry(now: number): SweepCursor {
    return {
      ...this.cursor,
      activeMs: this.activeMs(now),
      inflight: [...this.running.values()],
      generation: this.cursor.generation + 1,
    };
  }

  private status(): SweepProgress['status'] {
    const c = this.cursor;
    if (this.cancelled) return 'cancelled';
    if (this.finished) return c.budget?.reached ? 'budget-exhausted' : c.retry?.incomplete ? 'cancelled' : 'completed';
    return c.paused ? 'paused' : 'running';
  }

  /** What the `progress` query answers. */
  progress(now: number): SweepProgress {
    const { input, cursor: c } = this;
    const K = input.samples;
    const retried = c.retry?.retried;
    const perConfig: Record<string, SweepCounts> = {};
    for (const cell of input.cells)
      perConfig[cell.name] = {
        total: input.items * K,
        done: c.done[cell.name] ?? 0,
        failed: c.failed[cell.name] ?? 0,
        running: 0,
        ...(retried ? { retried: retried[cell.name] ?? 0 } : {}),
      };
    for (const unit of this.running.keys()) perConfig[this.decode(unit).cell.name]!.running++;
    const done = Object.values(c.done).reduce((a, b) => a + b, 0);
    const failed = Object.values(c.failed).reduce((a, b) => a + b, 0);
    const rate = runsPerSecond(done, this.activeMs(now));
    return {
      sweepId: input.sweepId,
      status: this.status(),
      total: this.total,
      done,
      failed,
      running: this.running.size,
      perConfig,
      retries: c.retries,
      ...(retried ? { retried: Object.values(retried).reduce((a, b) => a + b, 0) } : {}),
      rate,
      etaSeconds: etaSeconds(this.total - done, rate),
      generation: c.generation,
      startedAt: c.startedAt,
      ...(input.budget
        ? {
            budget: {
              ...input.budget,
              used: c.budget?.used ?? { tokens: 0 },
              ...(c.budget?.reached ? { reached: c.budget.reached } : {}),
            },
          }
        : {}),
    };
  }
}
