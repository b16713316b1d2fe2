// How a run's LLM calls are made (per-call timeout, re-asks, the provider per role), and how long
// one LLM activity may therefore run, so that a call with all its re-asks fits: the activity's
// start-to-close timeout is the workflow's, the per-call timeout the worker's, and the two must
// agree. Pure: the workflow imports it.
import type { LlmBatchPolicy } from './llm-batch';
import type { LlmRole } from './llm-roles';

/** The LLM call settings a run is started with (from the deployment's configuration), on which
 * its LLM activities' timeouts and task queues depend. Not a budget: token and cost budgets are
 * the run configuration's (`tokenBudget`, `costBudgetUsd`). */
export interface LlmCallPolicy {
  /** Per LLM call (DRIFTLINE_LLM_TIMEOUT_MS). */
  timeoutMs: number;
  /** Re-asks after an unusable reply (DRIFTLINE_LLM_MAX_REASKS). */
  maxReasks: number;
  /** The deployment's provider per role (DRIFTLINE_ROLE_<ROLE>, DRIFTLINE_PROVIDERS). Set: each
   * role's activities are scheduled on its provider's task queue (`llm-<provider>`), where the
   * provider's rate limit holds; absent (older runs): on the workflow's own queue. */
  providers?: Partial<Record<LlmRole, string>>;
  /** Set for the runs of a batch-mode sweep (common/llm-batch.ts); absent otherwise, so runs
   * without it schedule what they always did. */
  batch?: LlmBatchPolicy;
}

export const DEFAULT_LLM_CALL_POLICY: LlmCallPolicy = { timeoutMs: 120_000, maxReasks: 2 };

/**
 * Calls an activity can spend beyond its first try and re-asks: waiting on the start probe (at
 * most one call timeout) and two structured-output fallbacks (json_schema → json_object →
 * prompt). A reply cut off at max_tokens is asked again in place of a re-ask, not on top.
 */
export const EXTRA_LLM_CALLS = 3;

/** Room for what is not a call: prompt building, parsing, heartbeats. */
export const LLM_ACTIVITY_SLACK_MS = 30_000;

export function llmCallsPerActivity(policy: LlmCallPolicy): number {
  return policy.maxReasks + 1 + EXTRA_LLM_CALLS;
}

export function llmActivityTimeoutMs(policy: LlmCallPolicy = DEFAULT_LLM_CALL_POLICY): number {
  // In batch mode each call may wait for its batch before it is answered.
  const perCall = policy.timeoutMs + (policy.batch?.waitMs ?? 0);
  return llmCallsPerActivity(policy) * perCall + LLM_ACTIVITY_SLACK_MS;
}
