// Readiness: Temporal answers, the task queues (main, Lean, one per LLM provider) have live
// pollers (so the workers are up), and
// every library's index is built. What is not configured is listed, never hidden.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE } from '../common/activities';
import type { ReadinessReport } from './schemas';
import type { ProviderStatus } from '../engines/llm/provider';
import { DEFAULT_PROVIDER } from '../engines/llm/client';
import type { LeanIntegrityCounts } from '../engines/lean/integrity-status-file';

export interface ReadinessDeps {
  client: Client;
  namespace: string;
  /** Libraries whose index is not built (IndexRegistry.unbuilt); empty when all are. */
  unbuiltIndexes: () => Promise<string[]> | string[];
  missing: string[];
  /** Set when no library is served (its data not pulled yet): the \`library\` check fails with it. */
  noLibrary?: string;
  mainQueue?: string;
  leanQueue?: string;
  /** The LLM providers' task queues (`llm-<provider>`), served by the main worker processes. */
  llmQueues?: string[];
  /** The poller identities of the worker processes running now (`<pid>@<host>`, the SDK's
   * default), when a supervisor knows them. Temporal keeps listing a dead worker's pollers for
   * minutes, so without this a worker that just died would still look ready. Null: that
   * worker has no process right now (it is being restarted). */
  workerIdentities?: () => { main?: string | null; lean?: string | null };
  /** What the main worker learnt about each configured LLM provider (structured-output mode,
   * back-off), by provider name; a provider is absent until the worker has reported on it. */
  llmProviders?: () => Record<string, ProviderStatus>;
  /** Things that work but need attention (e.g. Temporal overloaded); listed, not failing. */
  warnings?: () => string[];
  /** The Lean workers' REPL tamperings and screen/Lean parse disagreements so far (decision
   * 0017): each is a hole found; reported and warned about, not failing. */
  leanIntegrity?: () => LeanIntegrityCounts;
}

// Informational: a provider backing off after a timeout does not make the stack unready (runs
// are durable and resume when it answers), but the detail says so.
function describeProvider(status: ProviderStatus): { ok: boolean; detail: string } {
  const busy =
    status.busyUntil && Date.parse(status.busyUntil) > Date.now() ? `backing off until ${status.busyUntil} after a timeout; ` : '';
  const fold = status.foldSystemPrompt ? '; system prompt folded into the first user message' : '';
  return { ok: true, detail: `${busy}structured output: ${status.structuredOutput} (${status.source}: ${status.detail})${fold}` };
}

/** Null when the queue has a poller (with `identity`, when given); otherwise what is wrong. */
async function pollerProblem(
  client: Client,
  namespace: string,
  queue: string,
  type: number,
  identity: string | null | undefined,
): Promise<string | null> {
  if (identity === null) return `the worker process of the "${queue}" task queue is not running (it is being restarted)`;
  const response = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: type,
  });
  const pollers = response.pollers ?? [];
  if (pollers.length === 0) return `no worker polls the "${queue}" task queue`;
  if (identity !== undefined && !pollers.some((p) => p.identity === identity)) {
    return `the worker process now running (${identity}) does not poll the "${queue}" task queue yet`;
  }
  return null;
}

export function createReadinessCheck(deps: ReadinessDeps): () => Promise<ReadinessReport> {
  const { TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY } = temporal.api.enums.v1.TaskQueueType;
  return async () => {
    const checks: ReadinessReport['checks'] = {};
    // Each check gives null (fine) or what is wrong.
    const attempt = async (name: string, check: () => Promise<string | null>) => {
      try {
        const problem = await check();
        checks[name] = problem === null ? { ok: true } : { ok: false, detail: problem };
      } catch (err) {
        checks[name] = { ok: false, detail: (err as Error).message };
      }
    };
    await attempt('temporal', async () => {
      await deps.client.workflowService.getSystemInfo({});
      return null;
    });
    const identities = deps.workerIdentities?.() ?? {};
    await attempt('mainWorker', () =>
      pollerProblem(deps.client, deps.namespace, deps.mainQueue ?? MAIN_TASK_QUEUE, TASK_QUEUE_TYPE_WORKFLOW, identities.main),
    );
    await attempt('leanWorker', () =>
      pollerProblem(deps.client, deps.namespace, deps.leanQueue ?? LEAN_TASK_QUEUE, TASK_QUEUE_TYPE_ACTIVITY, identities.lean),
    );
    if (deps.llmQueues?.length) {
      // Each provider's queue needs a poller, or that provider's runs wait for ever.
      await attempt('llmWorkers', async () => {
        const problems = await Promise.all(
          deps.llmQueues!.map((q) => pollerProblem(deps.client, deps.namespace, q, TASK_QUEUE_TYPE_ACTIVITY, identities.main)),
        );
        const found = problems.filter((p): p is string => p !== null);
        return found.length ? found.join('; ') : null;
      });
    }
    if (deps.noLibrary) checks.library = { ok: false, detail: deps.noLibrary };
    await attempt('index', async () => {
      const unbuilt = await deps.unbuiltIndexes();
      return unbuilt.length === 0 ? null : `no premise index is built for ${unbuilt.map((l) => `"${l}"`).join(', ')}`;
    });
    // The default provider under `llm` (as before there were several), the others as `llm:<name>`.
    const providers = deps.llmProviders?.() ?? {};
    for (const [name, status] of Object.entries(providers))
      checks[name === DEFAULT_PROVIDER ? 'llm' : `llm:${name}`] = describeProvider(status);
    const llm = providers[DEFAULT_PROVIDER];
    const warnings = [...(deps.warnings?.() ?? [])];
    const integrity = deps.leanIntegrity?.();
    const holes = integrity ? integrity.tampering + integrity.disagreement : 0;
    if (integrity && holes > 0)
      warnings.push(
        `Lean integrity: ${integrity.tampering} REPL tampering${integrity.tampering === 1 ? '' : 's'} and ${integrity.disagreement} screen/Lean parse disagreement${integrity.disagreement === 1 ? '' : 's'} recorded (each a hole in the screen; the Lean worker's log has the trust domain and detail)`,
      );
    return {
      ready: Object.values(checks).every((c) => c.ok),
      checks,
      missing: deps.missing,
      ...(llm ? { llm } : {}),
      ...(Object.keys(providers).length ? { llmProviders: providers } : {}),
      ...(warnings.length ? { warnings } : {}),
      ...(integrity && holes > 0 ? { leanIntegrity: integrity } : {}),
    };
  };
}
