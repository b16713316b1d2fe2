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
  /** How many times a line that failed (a failed or expired batch, an error line) is sent in a
   * new batch before it is sent one at a time; default DEFAULT_BATCH_RESUBMITS. */
  resubmits?: number;
}

export const DEFAULT_BATCH_RESUBMITS = 2;

/** The provider's completion window asked for (the Batch API knows only this one). */
export const BATCH_COMPLETION_WINDOW = '24h';

/** Default wait of one call for its batch: the 24 h window, once more for a resubmission, and an hour. */
export const DEFAULT_BATCH_WAIT_MS = (2 * 24 + 1) * 3600_000;

export const LLM_BATCHER_WORKFLOW = 'llmBatcher';

/** The batcher's signals: a call's request to collect, a call that stopped waiting, the sweep cancelled. */
export const LLM_BATCH_SIGNALS = { collect: 'llmBatchCollect', withdraw: 'llmBatchWithdraw', cancel: 'llmBatchCancel' } as const;

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

/** Whether a sweep sent anything in batch mode (a batch, or a line one at a time after its
 * resubmissions): the status views and the report show its batches only then. */
export function sentBatches(c: Pick<SweepBatchCounts, 'submitted' | 'synchronous'>): boolean {
  return c.submitted > 0 || c.synchronous > 0;
}

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

/** The task queue of a batch-mode run's LLM activities: they mostly wait for their batch, so
 * they get a worker of their own with many slots, apart from the providers' rate-limited queues (`llm-<provider>`, whose names this one cannot take). */
export const LLM_BATCH_TASK_QUEUE = 'driftline-llm-batch';

/** How a batcher flushes and polls (the deployment's settings, handed over when it starts). */
export interface BatcherSettings {
  /** Flush when this many requests are collected. */
  maxRequests: number;
  /** Flush when the oldest collected request is this old. */
  maxAgeMs: number;
  /** Between two looks at a batch in flight. */
  pollMs: number;
  /** The batcher ends after this long with nothing collected and nothing in flight (a later
   * request starts it again). */
  idleMs: number;
}

export interface BatcherInput extends BatcherSettings {
  sweep: string;
  provider: string;
  model: string;
  /** Resubmissions of a failed line before it goes one at a time. */
  resubmits: number;
  /** What a batcher that continued as new carries over. */
  carried?: BatcherState;
}

export interface BatchInFlightState {
  id: string;
  flushId: string;
  customIds: string[];
  status: ProviderBatchStatus;
  /** ms since the epoch (workflow time). */
  since: number;
}

/** The batcher's state: what it has collected and what is at the provider. */
export interface BatcherState {
  pending: string[];
  /** Workflow time the oldest pending request arrived. */
  pendingSince: number | null;
  /** Submissions so far of lines that failed at least once. */
  failures: Record<string, number>;
  inFlight: BatchInFlightState[];
  /** Batches this batcher (in all its runs) has flushed: numbers the next flush. */
  flushes: number;
  counts: { submitted: number; completed: number; failed: number; requests: number; resubmitted: number; synchronous: number };
}

export interface SubmitBatchInput {
  sweep: string;
  batcher: string;
  provider: string;
  model: string;
  /** Unique per flush, the same in every retry: the provider is asked for it before a batch is made. */
  flushId: string;
  customIds: string[];
}

export interface SubmitBatchResult {
  /** null: none of the requests still waited for a batch. */
  batchId: string | null;
  status: ProviderBatchStatus;
  /** The requests the batch carries. */
  customIds: string[];
  /** Of those, how many had been sent before. */
  resubmitted: number;
}

export interface CollectBatchInput {
  provider: string;
  batchId: string;
  customIds: string[];
  /** Lines that will not be sent again if they fail now (their resubmissions ran out, or nobody waits). */
  lastTry: string[];
}

export interface CollectBatchResult {
  answered: number;
  /** Lines that failed and go back to the batcher. */
  failed: string[];
  /** Lines that failed for the last time: their callers send them one at a time. */
  synchronous: string[];
}

/** The batcher's activities (main task queue). */
export interface LlmBatchActivities {
  submitLlmBatch(input: SubmitBatchInput): Promise<SubmitBatchResult>;
  pollLlmBatch(input: { provider: string; batchId: string }): Promise<{ status: ProviderBatchStatus }>;
  collectLlmBatch(input: CollectBatchInput): Promise<CollectBatchResult>;
  cancelLlmBatch(input: { provider: string; batchId: string }): Promise<void>;
  /** Requests the batcher lets go: nobody waits for them any more (`withdrawn`: the sweep was
   * cancelled), or their callers send them one at a time (`synchronous`: the provider refused
   * their batch for good). */
  releaseLlmRequests(input: { customIds: string[]; to: 'withdrawn' | 'synchronous' }): Promise<void>;
}
