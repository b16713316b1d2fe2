// Which LLM providers the running stack has, asked of the stack rather than of the caller's own
// environment: a provider is the stack's when a worker polls its queue (`llm-<name>`, one LLM
// worker per configured provider), which Temporal answers for any client that reaches it.
// Temporal cannot list task queues, so the names to ask about are the ones asked for and the
// ones the stack's main worker recorded in the data directory (its provider status file).
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { llmTaskQueue } from '../common/run-config-schema';
import { LLM_BATCH_TASK_QUEUE } from '../common/llm-batch';

const { TaskQueueKind, TaskQueueType } = proto.temporal.api.enums.v1;

/** Whether some worker polls the activity queue `name`. */
async function isPolled(client: Client, name: string): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return (response.pollers ?? []).length > 0;
}

/** Whether some worker polls the activity queue of `provider`. */
function isServed(client: Client, provider: string): Promise<boolean> {
  return isPolled(client, llmTaskQueue(provider));
}

/** Whether the stack serves batch mode: a main worker with a batch-capable provider polls the
 * queue of batch-mode runs' LLM calls (infra/run-worker.ts). */
export function servesBatchMode(client: Client): Promise<boolean> {
  return isPolled(client, LLM_BATCH_TASK_QUEUE);
}

/** The names among `candidates` whose provider queue a worker of the stack polls, sorted. */
export async function servedProviders(client: Client, candidates: Iterable<string>): Promise<string[]> {
  const names = [...new Set(candidates)].filter(Boolean).sort();
  const served = await Promise.all(names.map((name) => isServed(client, name)));
  return names.filter((_, i) => served[i]);
}
