// The ledger read at the end of a run (formalize and formalizeAgent): what the run's LLM calls
// used, cached replies included, read with a local activity (no task-queue round trip, one
// workflow task fewer). Histories from before 'llm-usage' read nothing.
import { deprecatePatch, patched, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { NON_RETRYABLE_TYPES } from '../common/failures';
import type { MainActivities } from '../common/activities';
import type { LlmUsageReport } from '../common/llm-types';

const options = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
};
const { llmUsage: llmUsageLocal } = proxyLocalActivities<MainActivities>(options);

export async function readRunUsage(): Promise<LlmUsageReport | undefined> {
  if (!patched('llm-usage')) return undefined;
  // Retired patch (docs/decisions/0015): no recorded run read the ledger with the scheduled
  // activity, so only the local read is left; deprecatePatch still writes the marker.
  deprecatePatch('llm-usage-local');
  return llmUsageLocal({ runId: workflowInfo().workflowId });
}
