// The `sweep` workflow: a benchmark × configurations × samples, run as child `formalize`
// workflows in a sliding window (a predictions configuration's units are `evaluateStatement`
// children, a rescore's `rejudge` children). Every unit (configuration, item, sample) has the
// child ID `<sweep>/<config>/<item>/<sample>`; its record is written once by an idempotent
// activity.
// The bookkeeping (unit IDs, which unit starts next, counters, budget, status, the cursor) is the
// ledger's (common/sweep-ledger.ts); this workflow starts and records the children and tells the
// ledger what happened. Before the history grows large it continues as new, carrying the cursor
// and the units still in flight, which the next run awaits through the record activity.
// `driftline sweep retry` starts it again under the same ID with a retry round (`retryRound`):
// only the failed units run, their records rewritten in place, one per unit.
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
import type { RejudgeInput } from '../common/rescore';
import type {
  BenchmarkItem,
  RecordedRun,
  RecordRunInput,
  SweepActivities,
  SweepCell,
  SweepInput,
  SweepProgress,
  UnitAttempt,
} from '../common/sweep';
import { SweepLedger, unitChildFor, type UnitChoice } from '../common/sweep-ledger';
import { MAIN_TASK_QUEUE } from '../common/activities';
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

/** Items come from the results database a page at a time (the input carries only counts);
 * the last few pages are kept. */
function itemPages(sweepId: string): (index: number) => Promise<BenchmarkItem> {
  const pages = new Map<number, Promise<BenchmarkItem[]>>();
  return async (index) => {
    const page = Math.floor(index / ITEM_PAGE);
    let items = pages.get(page);
    if (!items) {
      items = sweepItems({ sweepId, from: page * ITEM_PAGE, count: ITEM_PAGE });
      pages.set(page, items);
      if (pages.size > 4) pages.delete(pages.keys().next().value!);
    }
    const item = (await items)[index % ITEM_PAGE];
    if (!item) throw new Error(`sweep ${sweepId} has no item ${index} in the results database`);
    return item;
  };
}

/** A predictions configuration's statements, a page of items at a time (every sample of each). */
function predictionPages(sweepId: string, samples: number): (cell: string, index: number, sample: number) => Promise<string | undefined> {
  const pages = new Map<string, Promise<Map<string, string>>>();
  const perPage = Math.max(1, Math.floor(PREDICTION_PAGE / samples));
  return async (cell, index, sample) => {
    const page = Math.floor(index / perPage);
    const key = `${cell}/${page}`;
    let statements = pages.get(key);
    if (!statements) {
      statements = sweepPredictions({ sweepId, config: cell, from: page * perPage, count: perPage }).then(
        (list) => new Map(list.map((p) => [`${p.ord}/${p.sample}`, p.statement])),
      );
      pages.set(key, statements);
      if (pages.size > 4) pages.delete(pages.keys().next().value!);
    }
    return (await statements).get(`${index}/${sample}`);
  };
}

export async function sweep(input: SweepInput): Promise<SweepProgress> {
  const K = input.samples;
  const ledger = SweepLedger.start(input, Date.now());
  const historyLimit = input.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  let starting = 0;
  let tick = 0;
  const wake = () => void tick++;

  setHandler(sweepProgressQuery, () => ledger.progress(Date.now()));
  setHandler(pauseSignal, () => {
    if (ledger.pause(Date.now())) wake();
  });
  setHandler(resumeSignal, () => {
    if (ledger.resume(Date.now())) wake();
  });
  setHandler(cancelSignal, () => {
    ledger.cancel();
    wake();
  });

  const itemAt = itemPages(input.sweepId);
  const predictionAt = predictionPages(input.sweepId, K);

  /** The child a unit runs (common/sweep-ledger.ts); a predictions configuration's statement
   * is read first (a page of items at a time). Generated cells choose without awaiting anything. */
  const unitChild = (cell: SweepCell, item: BenchmarkItem, index: number, sample: number): UnitChoice | Promise<UnitChoice> =>
    cell.predictionsFile && !input.rescore
      ? predictionAt(cell.name, index, sample).then((statement) => unitChildFor(input, cell, item, sample, statement))
      : unitChildFor(input, cell, item, sample);

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
      if (isCancellation(err) && ledger.isCancelled) throw err;
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

  const runUnit = async (attempt: UnitAttempt, carried: boolean): Promise<void> => {
    const index = ledger.decode(attempt.unit).item;
    const item = await itemAt(index);
    const id = ledger.recordInput(attempt, { id: item.id, goldPremises: item.goldPremises, tags: item.tags });
    const recorded = carried ? await awaitUnit(id, item, index) : await startUnit(id, item, index);
    const reached = ledger.noteTotals(recorded.totals);
    if (reached) log.info('sweep budget reached; no more runs start', { sweepId: input.sweepId, reached });
    if (ledger.recorded(attempt, id, recorded) === 'retry')
      log.warn('sweep child failed; retrying', { workflowId: id.workflowId, attempt: attempt.attempt, error: recorded.error });
    wake();
  };

  const scope = new CancellationScope();
  const tasks = new Set<Promise<void>>();
  const launch = (next: UnitAttempt, carried: boolean) => {
    ledger.started(next);
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
      for (const unit of ledger.running.keys()) {
        const itemId = (await itemAt(ledger.decode(unit).item)).id;
        await getExternalWorkflowHandle(ledger.workflowId(unit, itemId))
          .cancel()
          .catch(() => undefined);
      }
    });
    scope.cancel();
    await Promise.allSettled([...tasks]);
  };

  for (const carried of ledger.takeInflight()) launch(carried, true);
  try {
    for (;;) {
      if (ledger.isCancelled) break;
      while (ledger.mayStart() && !wantsToContinue()) {
        const next = ledger.next();
        if (!next) break;
        launch(next, false);
      }
      if (ledger.isDone()) break;
      if (wantsToContinue() && starting === 0) {
        const cursor = ledger.carry(Date.now());
        log.info('sweep continues as new', {
          sweepId: input.sweepId,
          history: workflowInfo().historyLength,
          inflight: cursor.inflight.length,
        });
        await continueAsNew<typeof sweep>({ ...input, cursor });
      }
      const seen = tick;
      await condition(() => tick !== seen);
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled through Temporal: stop the children too, then end as cancelled.
    ledger.cancel();
    await cancelAll();
    throw err;
  }
  if (ledger.isCancelled) {
    await cancelAll();
    return ledger.progress(Date.now());
  }
  ledger.finish(Date.now());
  return ledger.progress(Date.now());
}
