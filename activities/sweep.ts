// Activities of the sweep workflow: reading a sweep's items from the results database, and
// writing each finished child's record once (idempotent, keyed by the child's workflow ID).
import { rootCauseMessage } from '../common/failures';
import { Context, heartbeat, sleep } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { RecordedRun, RecordRunInput, SweepActivities, SweepRunRecord } from '../common/sweep';
import { isRejudgeResult, type RescoreActivities } from '../common/rescore';
import type { ResultsDb } from '../engines/results/results-db';
import { failedRecord, missingRecord, recordFromResult, type RunIdentity } from '../engines/sweeps/record';
import { rescoredRecord } from '../engines/sweeps/rescore-record';
import { createRescoreActivities } from './rescore';
import { SqlReplyLedger } from '../engines/results/llm-ledger';

export interface SweepActivityDeps {
  results: ResultsDb;
}

export function createSweepActivities(deps: SweepActivityDeps): SweepActivities & RescoreActivities {
  const db = deps.results;
  const ledger = new SqlReplyLedger(db.driver);
  // The sweep's LLM totals (every call of its runs), for a sweep with a budget.
  const withTotals = async (input: RecordRunInput, recorded: RecordedRun): Promise<RecordedRun> => {
    if (!input.totals) return recorded;
    const t = await ledger.sweepTotals(input.sweepId);
    return { ...recorded, totals: { tokens: t.totalTokens, ...(t.costUsd !== undefined ? { costUsd: t.costUsd } : {}) } };
  };
  return {
    ...createRescoreActivities(deps),
    async sweepItems({ sweepId, from, count }) {
      return db.items(sweepId, from, count);
    },

    async recordSweepRun(input: RecordRunInput): Promise<RecordedRun> {
      return withTotals(input, await recordRun(input));
    },

    async sweepPredictions({ sweepId, config, from, count }) {
      return db.predictions(sweepId, config, from, count);
    },
  };

  async function recordRun(input: RecordRunInput): Promise<RecordedRun> {
    const done = await db.getRun(input.workflowId);
    // Written before (a retried activity, or a unit recorded before a crash): answer the same.
    // A retry round looks past the failed record it is there to replace (an earlier round's).
    const replacing = input.retryRound !== undefined && done?.outcome === 'failed' && (done.retryRound ?? 0) < input.retryRound;
    if (done && !replacing)
      return { workflowId: input.workflowId, outcome: done.outcome, finished: true, ...(done.error ? { error: done.error } : {}) };
    const id: RunIdentity = {
      sweepId: input.sweepId,
      cell: input.cell,
      item: input.item,
      sample: input.sample,
      workflowId: input.workflowId,
    };
    if (input.missingPrediction) {
      await db.recordRun(missingRecord(id, new Date()));
      return { workflowId: input.workflowId, outcome: 'missing', finished: true };
    }
    let failure = input.failure;
    let result: RecordRunInput['result'] = input.result;
    if (failure === undefined && result === undefined) {
      const handle = Context.current().client.workflow.getHandle(input.workflowId);
      const deadline = Date.now() + (input.waitMs ?? 0);
      for (;;) {
        let status: string;
        try {
          status = (await handle.describe()).status.name;
        } catch (err) {
          // Never started (the sweep continued as new while the unit was still being prepared):
          // the workflow starts it.
          if (err instanceof WorkflowNotFoundError)
            return { workflowId: input.workflowId, outcome: 'failed', finished: false, missing: true };
          throw err;
        }
        if (status === 'RUNNING') {
          if (Date.now() >= deadline) return { workflowId: input.workflowId, outcome: 'failed', finished: false };
          heartbeat();
          await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
          continue;
        }
        if (status === 'COMPLETED') {
          result = (await handle.result()) as RecordRunInput['result'];
        } else {
          failure = await handle.result().then(
            () => `the run ended with status ${status}`,
            (err: unknown) => rootCauseMessage(err),
          );
        }
        break;
      }
    }
    if (failure !== undefined) {
      await db.recordFailure(input.sweepId, input.workflowId, input.attempt, failure);
      if (input.lastAttempt) await write(failedRecord(id, failure, new Date()));
      return { workflowId: input.workflowId, outcome: 'failed', finished: true, failedAttempt: true, error: failure };
    }
    // A rescore's unit is recorded from its source's record and the new verdict.
    const record = isRejudgeResult(result)
      ? rescoredRecord(id, await db.getRun(result.rescore.source), result, new Date())
      : recordFromResult(id, result!, new Date());
    await write(record);
    return { workflowId: input.workflowId, outcome: record.outcome, finished: true };

    // Once per unit; in a retry round, in place of the unit's failed record (still one row).
    async function write(record: SweepRunRecord): Promise<void> {
      if (input.retryRound === undefined) await db.recordRun(record);
      else await db.replaceFailedRun({ ...record, retryRound: input.retryRound });
    }
  }
}
