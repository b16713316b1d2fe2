// The batcher's activities (workflows/llm-batcher.ts): submit a flush to the provider, look at a
// batch, write an ended batch's lines where the waiting calls read them, cancel. Each is safe to
// run twice: a flush is looked up (in the results database, then at the provider by its ID)
// before a batch is made, and a batch's lines are written only over lines still in it.
import {
  batchEnded,
  type CollectBatchInput,
  type CollectBatchResult,
  type LlmBatchActivities,
  type ProviderBatchStatus,
  type SubmitBatchInput,
  type SubmitBatchResult,
} from '../common/llm-batch';
import { LLM_FAILURE } from '../common/failures';
import type { SqlBatchStore, BatchLineOutcome } from '../engines/results/llm-batches';
import { activityFailure, mapEngineErrors } from './failures';
import { withHeartbeat } from './heartbeat';

/** What the batcher needs of a provider's Batch API (engines/llm/batch-api.ts). */
export interface ProviderBatchApi {
  submit(
    flushId: string,
    lines: Array<{ customId: string; body: Record<string, unknown> }>,
  ): Promise<{ id: string; status: ProviderBatchStatus; createdAt: string }>;
  state(batchId: string): Promise<{ status: ProviderBatchStatus }>;
  results(batchId: string, expected: string[]): Promise<BatchLineOutcome[]>;
  cancel(batchId: string): Promise<void>;
}

export interface LlmBatchActivityDeps {
  store: SqlBatchStore;
  /** The batch-capable providers, by name. */
  apis: Record<string, ProviderBatchApi>;
}

export function createLlmBatchActivities(deps: LlmBatchActivityDeps): LlmBatchActivities {
  const api = (provider: string): ProviderBatchApi => {
    const found = deps.apis[provider];
    if (!found) {
      throw activityFailure(
        LLM_FAILURE.notConfigured,
        `LLM provider "${provider}" is not batch-capable on this worker (batch-capable: ${Object.keys(deps.apis).join(', ') || 'none'})`,
      );
    }
    return found;
  };
  const call = <T>(work: () => Promise<T>): Promise<T> => mapEngineErrors(withHeartbeat(() => work()));

  return {
    async submitLlmBatch(input: SubmitBatchInput): Promise<SubmitBatchResult> {
      return call(async () => {
        // A retry after the batch was made and recorded: the same batch.
        const recorded = await deps.store.batchOfFlush(input.flushId);
        if (recorded)
          return { batchId: recorded.batchId, status: recorded.status, customIds: recorded.customIds, resubmitted: recorded.resubmissions };
        const waiting = await deps.store.waitingBodies(input.customIds);
        if (waiting.length === 0) return { batchId: null, status: 'completed', customIds: [], resubmitted: 0 };
        const lines = waiting.map((w) => ({ customId: w.customId, body: JSON.parse(w.body) as Record<string, unknown> }));
        // Asks the provider for this flush's batch first: a retry after the batch was made but
        // before it was recorded finds it there.
        const batch = await api(input.provider).submit(input.flushId, lines);
        const resubmitted = waiting.filter((w) => w.submissions > 0).length;
        const ids = waiting.map((w) => w.customId);
        await deps.store.submitted(
          {
            batchId: batch.id,
            sweep: input.sweep,
            batcher: input.batcher,
            provider: input.provider,
            model: input.model,
            flushId: input.flushId,
            status: batch.status,
            submittedAt: batch.createdAt,
          },
          ids,
          resubmitted,
        );
        return { batchId: batch.id, status: batch.status, customIds: ids, resubmitted };
      });
    },

    async pollLlmBatch({ provider, batchId }): Promise<{ status: ProviderBatchStatus }> {
      return call(async () => {
        const { status } = await api(provider).state(batchId);
        await deps.store.batchStatus(batchId, status);
        return { status };
      });
    },

    async collectLlmBatch(input: CollectBatchInput): Promise<CollectBatchResult> {
      return call(async () => {
        const lines = await api(input.provider).results(input.batchId, input.customIds);
        const last = new Set(input.lastTry);
        await deps.store.ended(input.batchId, lines, (id) => last.has(id));
        const failed = lines.filter((l) => !l.ok).map((l) => l.customId);
        return {
          answered: lines.length - failed.length,
          failed: failed.filter((id) => !last.has(id)),
          synchronous: failed.filter((id) => last.has(id)),
        };
      });
    },

    async cancelLlmBatch({ provider, batchId }): Promise<void> {
      return call(async () => {
        try {
          await api(provider).cancel(batchId);
        } catch (err) {
          // A provider refuses to cancel a batch that is finalizing: it ends by itself, and the
          // batcher looks at it until it has. Anything else is the refusal it seems.
          const now = await api(provider)
            .state(batchId)
            .catch(() => undefined);
          if (now && (now.status === 'finalizing' || now.status === 'cancelling' || batchEnded(now.status))) return;
          throw err;
        }
      });
    },

    async releaseLlmRequests({ customIds, to }): Promise<void> {
      return call(() => deps.store.release(customIds, to));
    },
  };
}
