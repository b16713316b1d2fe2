// The ledger read at the end of a run (formalize and formalizeAgent): what the run's LLM calls
// used, cached replies included. Runs since the 'llm-usage-local' patch read it with a local
// activity (no task-queue round trip, one workflow task fewer); older histories replay the
// scheduled activity, and those from before 'llm-usage' read nothing.
import { patched, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { NON_RETRYABLE_TYPES } from '../common/failures';
import type { MainActivities } from '../common/activities';
import type { LlmUsageReport } from '../common/llm-types';

const options = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
};
const { llmUsage } = proxyActivities<MainActivities>(options);
const { llmUsage: llmUsageLocal } = proxyLocalActivities<MainActivities>(options);

export async function readRunUsage(): Promise<LlmUsageReport | undefined> {
  if (!patched('llm-usage')) return undefined;
  const read = patched('llm-usage-local') ? llmUsageLocal : llmUsage;
  return read({ runId: workflowInfo().workflowId });
}
