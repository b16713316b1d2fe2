// LLM activities run their engine call inside the run's call context (run, stage, sample, cache,
// model overrides: engines/llm/call-context.ts) so the reply cache and the ledger know whom a
// reply is for, and refuse to start a call once the run's token or cost budget is spent.
import { Context } from '@temporalio/activity';
import { LLM_FAILURE } from '../common/failures';
import { DEFAULT_BATCH_RESUBMITS } from '../common/llm-batch';
import type { LlmMeter, LlmUsageReport } from '../common/llm-types';
import { withLlmCallContext } from '../engines/llm/call-context';
import type { LlmTotals } from '../engines/results/llm-ledger';
import { activityFailure } from './failures';

/** The ledger as activities read it. */
export interface LedgerTotals {
  runTotals(runId: string): Promise<LlmTotals>;
}

async function checkBudget(ledger: LedgerTotals | undefined, runId: string, meter: LlmMeter | undefined): Promise<void> {
  if (!ledger || !meter || (meter.tokenBudget === undefined && meter.costBudgetUsd === undefined)) return;
  const used = await ledger.runTotals(runId);
  if (meter.tokenBudget !== undefined && used.totalTokens >= meter.tokenBudget) {
    throw activityFailure(
      LLM_FAILURE.budgetExhausted,
      `the run's token budget is spent: ${used.totalTokens} tokens used of ${meter.tokenBudget} (config.tokenBudget)`,
    );
  }
  if (meter.costBudgetUsd !== undefined && (used.costUsd ?? 0) >= meter.costBudgetUsd) {
    throw activityFailure(
      LLM_FAILURE.budgetExhausted,
      `the run's cost budget is spent: $${(used.costUsd ?? 0).toFixed(4)} of $${meter.costBudgetUsd} (config.costBudgetUsd)`,
    );
  }
}

/** Runs an LLM engine call as part of the current activity's run. */
export async function meteredCall<T>(ledger: LedgerTotals | undefined, meter: LlmMeter | undefined, work: () => Promise<T>): Promise<T> {
  const info = Context.current().info;
  const runId = info.workflowExecution?.workflowId ?? 'unknown';
  await checkBudget(ledger, runId, meter);
  return withLlmCallContext(
    {
      runId,
      stage: info.activityType,
      sample: meter?.sample ?? 0,
      cache: meter?.cache ?? true,
      ...(meter?.models ? { models: meter.models } : {}),
      ...(meter?.providers ? { providers: meter.providers } : {}),
      ...(meter?.temperature !== undefined ? { temperature: meter.temperature } : {}),
      ...(meter?.batch
        ? {
            batch: {
              sweep: meter.batch.sweep,
              waitMs: meter.batch.waitMs,
              resubmits: meter.batch.resubmits ?? DEFAULT_BATCH_RESUBMITS,
              // The same in every retry of this activity: the run, its execution, the stage, the attempt.
              requestPrefix: `${runId}@${(info.workflowExecution?.runId ?? '').slice(0, 8)}/${info.activityType}/${info.activityId}`,
              seen: new Map<string, number>(),
            },
          }
        : {}),
    },
    work,
  );
}

/** What a run's LLM calls used, for its result; zeros where no ledger is kept. */
export async function usageReport(ledger: LedgerTotals | undefined, runId: string): Promise<LlmUsageReport> {
  if (!ledger) return { usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, cache: { hits: 0, misses: 0 } };
  const t = await ledger.runTotals(runId);
  return {
    usage: {
      promptTokens: t.promptTokens,
      completionTokens: t.completionTokens,
      totalTokens: t.totalTokens,
      ...(t.costUsd !== undefined ? { costUsd: t.costUsd } : {}),
    },
    cache: { hits: t.hits, misses: t.misses },
  };
}
