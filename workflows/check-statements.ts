// The `checkStatements` workflow: Lean statements checked without an LLM. Each one goes through
// the `compile` activity on the Lean queue (the screen first, then the REPL) and, when it has a
// gold statement and compiled, through `equivalence`; at most `concurrency` at a time. One
// result per statement, in the order given; a check whose activity failed after its retries is
// a result with `error`, never a lost statement.
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import { NON_RETRYABLE_TYPES } from '../common/failures';
import {
  CHECK_FINISHED_QUERY,
  CHECK_PROGRESS_QUERY,
  checkItemResult,
  refusedItemResult,
  type CheckFinished,
  type CheckItem,
  type CheckItemResult,
  type CheckProgress,
  type CheckStatementsInput,
  type CheckStatementsResult,
} from '../common/checks';
import { LEAN_TASK_QUEUE, type LeanActivities } from '../common/activities';
import { leanActivities } from './run-core';

export const checkProgressQuery = defineQuery<CheckProgress>(CHECK_PROGRESS_QUERY);
export const checkFinishedQuery = defineQuery<CheckFinished[], [number]>(CHECK_FINISHED_QUERY);

const DEFAULT_CONCURRENCY = 8;

export async function checkStatements(input: CheckStatementsInput): Promise<CheckStatementsResult> {
  const queue = input.leanTaskQueue ?? LEAN_TASK_QUEUE;
  // The timeouts and retries of a run's compile stage.
  const { compile } = leanActivities(queue);
  const { equivalence } = proxyActivities<LeanActivities>({
    taskQueue: queue,
    startToCloseTimeout: '10m',
    heartbeatTimeout: '30s',
    retry: { initialInterval: '2s', maximumAttempts: 2, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  });

  const items = input.statements;
  const progress: CheckProgress = { total: items.length, done: 0 };
  setHandler(checkProgressQuery, () => progress);
  // Queries and local state only: no command is added, so older histories replay unchanged.
  const finished: CheckFinished[] = [];
  setHandler(checkFinishedQuery, (after: number) => finished.slice(Math.max(0, after)));

  // Passed on only when set, so batches started before trust domains send what they always did.
  const domain = input.trustDomain ? { domain: input.trustDomain } : {};
  const check = async (item: CheckItem): Promise<CheckItemResult> => {
    // Refused by the screen where the batch was started: nothing goes to Lean.
    if (item.refused) return refusedItemResult(item);
    try {
      const compiled = await compile({ code: item.statement, ...domain });
      const beq =
        item.gold !== undefined && compiled.status === 'ok'
          ? await equivalence({ candidate: item.statement, gold: item.gold, ...domain })
          : null;
      return checkItemResult(item, compiled, beq);
    } catch (err) {
      return {
        ...(item.id !== undefined ? { id: item.id } : {}),
        compiled: false,
        status: 'failed',
        messages: [],
        durationMs: 0,
        // The activity's own words (an ActivityFailure's message only says that it failed).
        error: ((err as { cause?: Error }).cause ?? (err as Error)).message,
      };
    }
  };

  const results: CheckItemResult[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      const result = await check(items[index]!);
      results[index] = result;
      progress.done++;
      finished.push({ seq: finished.length + 1, index, result });
    }
  };
  const lanes = Math.max(1, Math.min(input.concurrency ?? DEFAULT_CONCURRENCY, items.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return { results };
}
