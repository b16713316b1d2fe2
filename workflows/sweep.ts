// The `sweep` workflow: a benchmark × configurations × samples, run as child `formalize`
// workflows in a sliding window (a predictions configuration's units are `evaluateStatement`
// children, a rescore's `rejudge` children). Every unit (configuration, item, sample) has the
// child ID `<sweep>/<config>/<item>/<sample>`; its record is written once by an idempotent
// activity.
// Before the history grows large the workflow continues as new, carrying a cursor, counters and
// the units still in flight, which the next run awaits through the record activity.
// `driftline sweep retry` starts it again under the same ID with a cursor whose retry queue holds
// only the failed units (`cursor.retry`): their records are rewritten in place, one per unit.
import { rootCauseMessage } from '../common/failures';
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
  WorkflowIdReusePolicy,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { CONFIG_KEY, LIBRARY_KEY, STAGE_KEY, SWEEP_KEY } from '../common/search-attributes';
import { resolveRunConfig, workflowTypeFor } from '../common/run-config';
import { rejudgeInput, type RejudgeInput } from '../common/rescore';
import { etaSeconds, runsPerSecond } from '../common/sweep-rate';
import type {
  BenchmarkItem,
  RecordedRun,
  RecordRunInput,
  SweepActivities,
  SweepCell,
  SweepCounts,
  SweepCursor,
  SweepInput,
  SweepProgress,
  UnitAttempt,
} from '../common/sweep';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE } from '../common/activities';
import type { EvaluateStatementInput, FormalizeInput } from '../common/run-types';

export const sweepProgressQuery = defineQuery<SweepProgress>('progress');
export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const cancelSignal = defineSignal('cancel');

// The results database may be down for a while (a PostgreSQL restart): keep retrying.
const { sweepItems, recordSweepRun, sweepPredictions } = proxyActivities<SweepActivities>({
  startToCloseTimeout: '2m',
  // Both activities heartbeat while they wait; a killed worker is noticed in seconds.
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Items fetched per activity call. */
const ITEM_PAGE = 100;
/** Statements of a predictions configuration fetched per activity call (whole items, at least one). */
const PREDICTION_PAGE = 50;
/** Continue as new past this many history events unless the input says otherwise. */
export const DEFAULT_HISTORY_LIMIT = 4000;
/** How long one poll of a carried-over child waits inside the record activity. */
const CARRIED_WAIT_MS = 20_000;

function freshCursor(input: SweepInput, now: number): SweepCursor {
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

/** What a unit runs: a child workflow of this type with these arguments, or nothing (a
 * predictions configuration's file has no statement for the unit). */
type UnitChoice = { type: string; args: FormalizeInput | EvaluateStatementInput | RejudgeInput } | { missing: true };

export async function sweep(input: SweepInput): Promise<SweepProgress> {
  const C = input.cells.length;
  const K = input.samples;
  const total = input.items * C * K;
  const reused = new Set(input.reusedCells ?? []);
  const cur: SweepCursor = input.cursor ?? freshCursor(input, Date.now());
  const historyLimit = input.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  const running = new Map<number, UnitAttempt>(); // unit → its attempt
  let starting = 0;
  let cancelled = false;
  let finished = false;
  let stretchStart = Date.now();
  let tick = 0;
  const wake = () => void tick++;

  const decode = (unit: number) => ({ item: Math.floor(unit / (C * K)), cell: input.cells[Math.floor(unit / K) % C]!, sample: unit % K });
  const activeMs = () => cur.activeMs + (cur.paused ? 0 : Date.now() - stretchStart);

  const progress = (): SweepProgress => {
    const perConfig: Record<string, SweepCounts> = {};
    const retried = cur.retry?.retried;
    for (const cell of input.cells)
      perConfig[cell.name] = {
        total: input.items * K,
        done: cur.done[cell.name] ?? 0,
        failed: cur.failed[cell.name] ?? 0,
        running: 0,
        ...(retried ? { retried: retried[cell.name] ?? 0 } : {}),
      };
    for (const unit of running.keys()) perConfig[decode(unit).cell.name]!.running++;
    const done = Object.values(cur.done).reduce((a, b) => a + b, 0);
    const failed = Object.values(cur.failed).reduce((a, b) => a + b, 0);
    const rate = runsPerSecond(done, activeMs());
    return {
      sweepId: input.sweepId,
      status: cancelled
        ? 'cancelled'
        : finished
          ? cur.budget?.reached
            ? 'budget-exhausted'
            : cur.retry?.incomplete
              ? 'cancelled'
              : 'completed'
          : cur.paused
            ? 'paused'
            : 'running',
      total,
      done,
      failed,
      running: running.size,
      perConfig,
      retries: cur.retries,
      ...(retried ? { retried: Object.values(retried).reduce((a, b) => a + b, 0) } : {}),
      rate,
      etaSeconds: etaSeconds(total - done, rate),
      generation: cur.generation,
      startedAt: cur.startedAt,
      ...(input.budget
        ? {
            budget: {
              ...input.budget,
              used: cur.budget?.used ?? { tokens: 0 },
              ...(cur.budget?.reached ? { reached: cur.budget.reached } : {}),
            },
          }
        : {}),
    };
  };
  // The sweep's LLM budget: the record activity answers the sweep's totals after each run; once
  // they reach the budget no unit starts any more (running ones finish and are recorded).
  const noteTotals = (totals: RecordedRun['totals']): void => {
    if (!input.budget || !totals) return;
    const b = input.budget;
    const reached =
      cur.budget?.reached ??
      (b.tokens !== undefined && totals.tokens >= b.tokens
        ? `token budget reached: ${totals.tokens} tokens used of ${b.tokens}`
        : b.costUsd !== undefined && (totals.costUsd ?? 0) >= b.costUsd
          ? `cost budget reached: $${(totals.costUsd ?? 0).toFixed(4)} used of $${b.costUsd}`
          : undefined);
    cur.budget = { used: totals, ...(reached ? { reached } : {}) };
    if (reached) log.info('sweep budget reached; no more runs start', { sweepId: input.sweepId, reached });
  };
  const budgetReached = () => Boolean(cur.budget?.reached);
  setHandler(sweepProgressQuery, progress);
  setHandler(pauseSignal, () => {
    if (cur.paused || cancelled) return;
    cur.activeMs += Date.now() - stretchStart;
    cur.paused = true;
    wake();
  });
  setHandler(resumeSignal, () => {
    if (!cur.paused) return;
    cur.paused = false;
    stretchStart = Date.now();
    wake();
  });
  setHandler(cancelSignal, () => {
    cancelled = true;
    wake();
  });

  // Items come from the results database a page at a time (the input carries only counts).
  const pages = new Map<number, Promise<BenchmarkItem[]>>();
  const itemAt = async (index: number): Promise<BenchmarkItem> => {
    const page = Math.floor(index / ITEM_PAGE);
    let items = pages.get(page);
    if (!items) {
      items = sweepItems({ sweepId: input.sweepId, from: page * ITEM_PAGE, count: ITEM_PAGE });
      pages.set(page, items);
      if (pages.size > 4) pages.delete(pages.keys().next().value!);
    }
    const item = (await items)[index % ITEM_PAGE];
    if (!item) throw new Error(`sweep ${input.sweepId} has no item ${index} in the results database`);
    return item;
  };

  // A predictions configuration's statements, a page of items at a time (every sample of each).
  const predictionPages = new Map<string, Promise<Map<string, string>>>();
  const predictionAt = async (cell: string, index: number, sample: number): Promise<string | undefined> => {
    const perPage = Math.max(1, Math.floor(PREDICTION_PAGE / K));
    const page = Math.floor(index / perPage);
    const key = `${cell}/${page}`;
    let statements = predictionPages.get(key);
    if (!statements) {
      statements = sweepPredictions({ sweepId: input.sweepId, config: cell, from: page * perPage, count: perPage }).then(
        (list) => new Map(list.map((p) => [`${p.ord}/${p.sample}`, p.statement])),
      );
      predictionPages.set(key, statements);
      if (predictionPages.size > 4) predictionPages.delete(predictionPages.keys().next().value!);
    }
    return (await statements).get(`${index}/${sample}`);
  };

  /** The child a unit runs: a generated run (`formalize`, or `formalizeAgent` for agent cells)
   * or, for a predictions configuration, `evaluateStatement` of the file's statement (in a
   * rescore, `rejudge` of the source's record of the unit); `missing`
   * when the file has none for the unit. Generated cells choose without awaiting anything. */
  const unitChild = (cell: SweepCell, item: BenchmarkItem, index: number, sample: number): UnitChoice | Promise<UnitChoice> => {
    const config = resolveRunConfig(cell.config);
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
        leanTaskQueue: input.leanTaskQueue ?? LEAN_TASK_QUEUE,
        ...(item.goldStatement ? { goldStatement: item.goldStatement } : {}),
        ...(input.llm ? { llm: input.llm } : {}),
      });
      return { type: 'rejudge', args };
    }
    if (cell.predictionsFile) {
      return predictionAt(cell.name, index, sample).then((formalStatement): UnitChoice => {
        if (formalStatement === undefined) return { missing: true };
        // No retrieval, so no exclusions, gold premises or index version: the statement is given.
        const evaluate: EvaluateStatementInput = {
          statement: item.informal,
          formalStatement,
          library: input.library,
          config,
          leanTaskQueue: input.leanTaskQueue ?? LEAN_TASK_QUEUE,
          ...(item.goldStatement ? { goldStatement: item.goldStatement } : {}),
          ...(input.llm ? { llm: input.llm } : {}),
          ...(sample ? { sample } : {}),
        };
        return { type: 'evaluateStatement', args: evaluate };
      });
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
      leanTaskQueue: input.leanTaskQueue ?? LEAN_TASK_QUEUE,
      ...(item.goldStatement ? { goldStatement: item.goldStatement } : {}),
      ...(input.indexVersion ? { indexVersion: input.indexVersion } : {}),
      ...(input.llm ? { llm: input.llm } : {}),
      // k samples of an item are k different LLM cache entries (and the same k on a re-run).
      ...(sample ? { sample } : {}),
    };
    return { type: workflowTypeFor(config), args: child };
  };

  const startUnit = async (id: RecordRunInput, item: BenchmarkItem, index: number): Promise<RecordedRun> => {
    const cell = input.cells.find((c) => c.name === id.cell.name)!;
    let handle: ChildWorkflowHandle<(input: FormalizeInput | EvaluateStatementInput | RejudgeInput) => Promise<unknown>>;
    // Counted until the start is confirmed (or a predictions unit's statement is read and, when
    // missing, its record written): the sweep never continues as new with a start in flight.
    starting++;
    try {
      const chosen = unitChild(cell, item, index, id.sample);
      const choice = chosen instanceof Promise ? await chosen : chosen;
      // Nothing to run: the unit's record says the file had no statement for it.
      if ('missing' in choice) return await recordSweepRun({ ...id, missingPrediction: true, ...(input.budget ? { totals: true } : {}) });
      // Agent cells run the tool-calling loop; its result has the same shape.
      handle = await startChild(choice.type, {
        workflowId: id.workflowId,
        taskQueue: input.taskQueue ?? MAIN_TASK_QUEUE,
        args: [choice.args],
        // Children outlive a continueAsNew of the sweep; the next run awaits them.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A failed child may be retried under the same ID; a completed one never runs again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        cancellationType: ChildWorkflowCancellationType.TRY_CANCEL,
        typedSearchAttributes: [
          { key: SWEEP_KEY, value: input.sweepId },
          { key: CONFIG_KEY, value: cell.name },
          { key: LIBRARY_KEY, value: input.library },
          { key: STAGE_KEY, value: 'starting' },
        ],
        memo: { sweep: input.sweepId, item: item.id, sample: id.sample },
      });
    } catch (err) {
      // Started before by this sweep (and not failed): await it like a carried-over unit.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return awaitUnit(id, item, index);
      throw err;
    } finally {
      starting--;
      wake();
    }
    let failure: string | undefined;
    let result: RecordRunInput['result'];
    try {
      result = (await handle.result()) as RecordRunInput['result'];
    } catch (err) {
      // The sweep's own cancellation ends the unit unrecorded; anything else (a child cancelled
      // or terminated by hand, a failure) is a failed attempt.
      if (isCancellation(err) && cancelled) throw err;
      failure = rootCauseMessage(err);
    }
    // The result goes to the record activity as it is: no second read of it from Temporal.
    return recordSweepRun({ ...id, ...(failure !== undefined ? { failure } : { result }), ...(input.budget ? { totals: true } : {}) });
  };

  // A unit started by an earlier run: the record activity waits for it and writes its record.
  const awaitUnit = async (id: RecordRunInput, item: BenchmarkItem, index: number): Promise<RecordedRun> => {
    for (;;) {
      const r = await recordSweepRun({ ...id, waitMs: CARRIED_WAIT_MS, ...(input.budget ? { totals: true } : {}) });
      if (r.missing) return startUnit(id, item, index);
      if (r.finished) return r;
      await sleep(1000);
    }
  };

  const runUnit = async ({ unit, attempt, last }: UnitAttempt, carried: boolean): Promise<void> => {
    const { item: index, cell, sample } = decode(unit);
    const item = await itemAt(index);
    const id: RecordRunInput = {
      sweepId: input.sweepId,
      workflowId: `${input.sweepId}/${cell.name}/${item.id}/${sample}`,
      cell: { name: cell.name, hash: cell.hash },
      item: { id: item.id, goldPremises: item.goldPremises, tags: item.tags },
      sample,
      attempt,
      lastAttempt: attempt >= (last ?? input.maxAttempts),
      // A retry round replaces the unit's failed record instead of keeping the first one.
      ...(cur.retry ? { retryRound: cur.retry.round } : {}),
    };
    const recorded = carried ? await awaitUnit(id, item, index) : await startUnit(id, item, index);
    running.delete(unit);
    noteTotals(recorded.totals);
    if (recorded.failedAttempt && !id.lastAttempt) {
      // Past the budget a failed attempt is not retried: the unit stays unrun, like the rest.
      if (!budgetReached()) {
        log.warn('sweep child failed; retrying', { workflowId: id.workflowId, attempt, error: recorded.error });
        cur.retries++;
        cur.retryQueue.push({ unit, attempt: attempt + 1, ...(last !== undefined ? { last } : {}) });
      }
    } else if (cur.retry) {
      // A retried unit's failed record counted it done and failed already; its new record
      // replaces that one, so only a success moves a counter.
      if (recorded.outcome !== 'failed') cur.failed[cell.name] = Math.max(0, (cur.failed[cell.name] ?? 0) - 1);
    } else {
      cur.done[cell.name] = (cur.done[cell.name] ?? 0) + 1;
      if (recorded.outcome === 'failed') cur.failed[cell.name] = (cur.failed[cell.name] ?? 0) + 1;
    }
    wake();
  };

  const scope = new CancellationScope();
  const tasks = new Set<Promise<void>>();
  const launch = (next: UnitAttempt, carried: boolean) => {
    running.set(next.unit, next);
    const task = scope
      .run(() => runUnit(next, carried))
      .catch((err) => {
        if (!isCancellation(err)) throw err;
      })
      .finally(() => tasks.delete(task));
    tasks.add(task);
  };

  const wantsToContinue = () => {
    const info = workflowInfo();
    return info.historyLength >= historyLimit || info.continueAsNewSuggested;
  };

  const cancelAll = async () => {
    // Children started by an earlier run are not in this run's scope: ask them by ID.
    await CancellationScope.nonCancellable(async () => {
      for (const unit of running.keys()) {
        const { cell, sample, item } = decode(unit);
        const itemId = (await itemAt(item)).id;
        await getExternalWorkflowHandle(`${input.sweepId}/${cell.name}/${itemId}/${sample}`)
          .cancel()
          .catch(() => undefined);
      }
    });
    scope.cancel();
    await Promise.allSettled([...tasks]);
  };

  for (const f of cur.inflight) launch(f, true);
  cur.inflight = [];
  try {
    for (;;) {
      if (cancelled) break;
      while (!cur.paused && !budgetReached() && running.size < input.window && !wantsToContinue()) {
        let next: UnitAttempt | undefined = cur.retryQueue.shift();
        while (!next && cur.next < total) {
          const unit = cur.next++;
          if (!reused.has(decode(unit).cell.name)) next = { unit, attempt: 1 };
        }
        if (!next) break;
        launch(next, false);
      }
      if (running.size === 0 && ((cur.retryQueue.length === 0 && cur.next >= total) || budgetReached())) break;
      if (wantsToContinue() && starting === 0) {
        const carried: SweepCursor = {
          ...cur,
          activeMs: activeMs(),
          inflight: [...running.values()],
          generation: cur.generation + 1,
        };
        log.info('sweep continues as new', {
          sweepId: input.sweepId,
          history: workflowInfo().historyLength,
          inflight: carried.inflight.length,
        });
        await continueAsNew<typeof sweep>({ ...input, cursor: carried });
      }
      const seen = tick;
      await condition(() => tick !== seen);
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled through Temporal: stop the children too, then end as cancelled.
    cancelled = true;
    await cancelAll();
    throw err;
  }
  if (cancelled) {
    await cancelAll();
    return progress();
  }
  finished = true;
  // The last stretch goes into activeMs once: progress() must not add it a second time.
  cur.activeMs = activeMs();
  stretchStart = Date.now();
  cur.paused = false;
  return progress();
}
