// How long one LLM activity may run, derived from the LLM settings so that a call with all its
// re-asks fits: the activity's start-to-close timeout is the workflow's, the per-call timeout
// the worker's, and the two must agree. Pure: the workflow imports it.

import type { LlmBudget } from './types';

export type { LlmBudget };

export const DEFAULT_LLM_BUDGET: LlmBudget = { timeoutMs: 120_000, maxReasks: 2 };

/**
 * Calls an activity can spend beyond its first try and re-asks: waiting on the start probe (at
 * most one call timeout) and two structured-output fallbacks (json_schema → json_object →
 * prompt). A reply cut off at max_tokens is asked again in place of a re-ask, not on top.
 */
export const EXTRA_LLM_CALLS = 3;

/** Room for what is not a call: prompt building, parsing, heartbeats. */
export const LLM_ACTIVITY_SLACK_MS = 30_000;

export function llmCallsPerActivity(budget: LlmBudget): number {
  return budget.maxReasks + 1 + EXTRA_LLM_CALLS;
}

export function llmActivityTimeoutMs(budget: LlmBudget = DEFAULT_LLM_BUDGET): number {
  return llmCallsPerActivity(budget) * budget.timeoutMs + LLM_ACTIVITY_SLACK_MS;
}
