// Who is asking, for the LLM layer's cache and accounting: the run, the stage, the sample index
// and the run's own choices (cache on or off, model and temperature overrides). Activities set it
// around an engine call (AsyncLocalStorage), so the prompt builders and stage functions between
// them need not carry it; calls made outside any run (evaluations, the CLI) have none.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LlmRole } from './messages';

export interface LlmCallContext {
  /** The run's workflow ID. */
  runId?: string;
  /** The activity, e.g. `formalize`. */
  stage?: string;
  /** k samples of one item are k different cache entries; 0 otherwise. */
  sample: number;
  /** false: neither read nor write the reply cache. */
  cache: boolean;
  /** Per-run model choices (sweep factors), by role. */
  models?: Partial<Record<LlmRole, string>>;
  /** Per-run provider choices by role (provider names of the configuration). */
  providers?: Partial<Record<LlmRole, string>>;
  temperature?: number;
  /** Batch mode (a batch-mode sweep's run): calls to a batch-capable provider wait for a batch. */
  batch?: BatchCallContext;
}

/** What a call in batch mode needs to name its request and find its batcher. */
export interface BatchCallContext {
  /** The sweep whose batchers collect the call. */
  sweep: string;
  /** How long the call may wait for its answer. */
  waitMs: number;
  /** Resubmissions of a failed line before it is sent one at a time (the sweep's limit). */
  resubmits: number;
  /** `<workflow ID>@<run>/<stage>/<activity ID>`: the run, the stage and the attempt, the same
   * in every retry of the activity, so a retried call finds the request it made before. */
  requestPrefix: string;
  /** How many times each request was made in this activity so far (identical requests, e.g.
   * with the reply cache off, are different lines). */
  seen: Map<string, number>;
}

const storage = new AsyncLocalStorage<LlmCallContext>();

export function withLlmCallContext<T>(ctx: LlmCallContext, fn: () => Promise<T>): Promise<T> {
  return storage.run(ctx, fn);
}

export function currentLlmCallContext(): LlmCallContext | undefined {
  return storage.getStore();
}
