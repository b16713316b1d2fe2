// Readiness: Temporal answers, both task queues have live pollers (so the workers are up), and
// every library's index is built. What is not configured is listed, never hidden.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE } from '../common/types';
import type { ReadinessReport } from './server';

export interface ReadinessDeps {
  client: Client;
  namespace: string;
  indexReady: () => Promise<boolean> | boolean;
  missing: string[];
  mainQueue?: string;
  leanQueue?: string;
}

async function hasPollers(client: Client, namespace: string, queue: string, type: number): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: type,
  });
  return (response.pollers?.length ?? 0) > 0;
}

export function createReadinessCheck(deps: ReadinessDeps): () => Promise<ReadinessReport> {
  const { TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY } = temporal.api.enums.v1.TaskQueueType;
  return async () => {
    const checks: ReadinessReport['checks'] = {};
    const attempt = async (name: string, check: () => Promise<boolean>, failDetail: string) => {
      try {
        const ok = await check();
        checks[name] = ok ? { ok } : { ok, detail: failDetail };
      } catch (err) {
        checks[name] = { ok: false, detail: (err as Error).message };
      }
    };
    await attempt('temporal', async () => {
      await deps.client.workflowService.getSystemInfo({});
      return true;
    }, 'Temporal does not answer');
    await attempt('mainWorker', () => hasPollers(deps.client, deps.namespace, deps.mainQueue ?? MAIN_TASK_QUEUE, TASK_QUEUE_TYPE_WORKFLOW), `no worker polls the "${deps.mainQueue ?? MAIN_TASK_QUEUE}" task queue`);
    await attempt('leanWorker', () => hasPollers(deps.client, deps.namespace, deps.leanQueue ?? LEAN_TASK_QUEUE, TASK_QUEUE_TYPE_ACTIVITY), `no worker polls the "${deps.leanQueue ?? LEAN_TASK_QUEUE}" task queue`);
    await attempt('index', async () => deps.indexReady(), 'the premise index is not built yet');
    return { ready: Object.values(checks).every((c) => c.ok), checks, missing: deps.missing };
  };
}
