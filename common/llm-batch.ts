// Batch mode: a sweep's LLM calls collected into provider batches (the OpenAI Batch API and the
// providers that serve the same protocol), at the batch price. What a run is told, the batcher
// workflow's name and ID, the batch statuses and the counts every door shows. Pure: the
// workflows import it. How it works: docs/sweeps.md, decisions/0022.

/** What a run of a batch-mode sweep carries in its `llm` policy (`LlmCallPolicy.batch`). The
 * activities send a call to a batch-capable provider to the sweep's batcher and wait for the
 * answer; calls to other providers go out at once as always. */
export interface LlmBatchPolicy {
  /** The sweep whose batchers collect the run's calls. */
  sweep: string;
  /** How long one call may wait for its batch to come back (the provider's completion window
   * and the batcher's age limit, with room for resubmissions); LLM activities' timeouts grow by it. */
  waitMs: number;
}

/** The provider's completion window asked for (the Batch API knows only this one). */
export const BATCH_COMPLETION_WINDOW = '24h';

/** Default wait of one call for its batch: the 24 h window, once more for a resubmission, and an hour. */
export const DEFAULT_BATCH_WAIT_MS = (2 * 24 + 1) * 3600_000;

export const LLM_BATCHER_WORKFLOW = 'llmBatcher';

/** One batcher per sweep, provider and model: a batch holds one model's requests, and a sweep's
 * batches are its own, so cancelling the sweep cancels only them. */
export function batcherWorkflowId(sweep: string, provider: string, model: string): string {
  return `llm-batch/${sweep}/${provider}/${model}`;
}

/** A batch's status at the provider, as the Batch API names it. */
export const PROVIDER_BATCH_STATUSES = [
  'validating',
  'in_progress',
  'finalizing',
  'completed',
  'failed',
  'expired',
  'cancelling',
  'cancelled',
] as const;
export type ProviderBatchStatus = (typeof PROVIDER_BATCH_STATUSES)[number];

/** Statuses after which the provider does nothing more with a batch. */
export function batchEnded(status: ProviderBatchStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'expired' || status === 'cancelled';
}

/** One batch at the provider, as status views show it. */
export interface BatchInFlight {
  id: string;
  provider: string;
  model: string;
  status: ProviderBatchStatus;
  requests: number;
  /** ISO time the batch was submitted. */
  since: string;
}

/** A sweep's batches (`sweep status --json` `batches`, the web card, the report). */
export interface SweepBatchCounts {
  /** Batches at the provider not yet ended. */
  inFlight: number;
  /** Batches submitted. */
  submitted: number;
  /** Batches that came back completed (some of their lines may still have failed). */
  completed: number;
  /** Batches that failed, expired or were cancelled. */
  failed: number;
  /** Request lines submitted, resubmissions included. */
  requests: number;
  /** Lines sent again after a failed or expired batch or an error line. */
  resubmitted: number;
  /** Calls answered synchronously after their resubmissions ran out. */
  synchronous: number;
  /** The batches in flight. */
  batches: BatchInFlight[];
}
