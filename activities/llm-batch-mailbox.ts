// Where a batch-mode call hands its request over (engines/llm/batch-fetch.ts): the request is
// stored in the results database, then its sweep's batcher is signalled, started if it is not
// running (signal-with-start), so the batcher's state in Temporal names every request that waits.
// Storing first means a batcher never holds an ID whose body it cannot read.
import type { Client } from '@temporalio/client';
import {
  LLM_BATCHER_WORKFLOW,
  LLM_BATCH_SIGNALS,
  DEFAULT_BATCH_RESUBMITS,
  type BatcherInput,
  type BatcherSettings,
} from '../common/llm-batch';
import { MAIN_TASK_QUEUE } from '../common/activities';
import { SWEEP_KEY } from '../common/search-attributes';
import type { BatchMailbox } from '../engines/llm/batch-fetch';
import type { BatchCallContext } from '../engines/llm/call-context';
import type { CollectedRequest, SqlBatchStore } from '../engines/results/llm-batches';

/** `client` is asked for on the first batch-mode call: a worker that never sees one never connects twice. */
export function temporalBatchMailbox(
  store: SqlBatchStore,
  client: () => Promise<Client>,
  settings: BatcherSettings,
  /** Where batchers run: the main queue (tests name their own). */
  taskQueue: string = MAIN_TASK_QUEUE,
): BatchMailbox {
  return {
    async post(req: CollectedRequest, ctx: BatchCallContext): Promise<void> {
      await store.collect(req);
      const input: BatcherInput = {
        ...settings,
        sweep: req.sweep,
        provider: req.provider,
        model: req.model,
        resubmits: ctx.resubmits ?? DEFAULT_BATCH_RESUBMITS,
      };
      await (
        await client()
      ).workflow.signalWithStart(LLM_BATCHER_WORKFLOW, {
        workflowId: req.batcher,
        taskQueue,
        args: [input],
        signal: LLM_BATCH_SIGNALS.collect,
        signalArgs: [{ customId: req.customId }],
        typedSearchAttributes: [{ key: SWEEP_KEY, value: req.sweep }],
        memo: { sweep: req.sweep, provider: req.provider, model: req.model },
      });
    },
    read: (customId) => store.request(customId),
    async withdraw(customId: string, batcher: string): Promise<void> {
      await store.withdraw([customId]);
      await (
        await client()
      ).workflow
        .getHandle(batcher)
        .signal(LLM_BATCH_SIGNALS.withdraw, { customId })
        .catch(() => undefined); // a batcher that ended has nothing of it
    },
  };
}
