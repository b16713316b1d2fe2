// What runs and activities know of LLM calls: roles, the meter a run hands its LLM activities
// (reply cache, ledger, budgets), and token usage.
import type { LlmBatchPolicy } from './llm-batch';
import type { LlmRole } from './llm-roles';

/** The roles an LLM plays; each may have its own model. */

/** What an LLM activity needs to know of the run for the reply cache and the ledger. */
export interface LlmMeter {
  cache: boolean;
  /** Sample index: k samples of an item are k cache entries. */
  sample: number;
  models?: Partial<Record<LlmRole, string>>;
  /** The provider each routed role's calls go to (the one whose task queue ran the activity). */
  providers?: Partial<Record<LlmRole, string>>;
  temperature?: number;
  /** Stop before a call once the run's calls used this many tokens. */
  tokenBudget?: number;
  costBudgetUsd?: number;
  /** Batch mode: the calls to a batch-capable provider go to this sweep's batchers. */
  batch?: LlmBatchPolicy;
}

/** Token usage of a run's LLM calls, summed (cached replies count: they are the run's replies). */
export interface RunUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** US dollars actually paid (cache hits cost nothing); absent when a model has no price. */
  costUsd?: number;
}

/** What the run's LLM calls used, from the ledger (`llmUsage` activity). */
export interface LlmUsageReport {
  usage: RunUsage;
  cache: { hits: number; misses: number };
}

export interface TokenUsage {
  prompt: number;
  completion: number;
  total: number;
}
