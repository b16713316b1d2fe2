// Starting and reading formalization runs through the Temporal client; shared by the HTTP API
// and the CLI so both name, tag and report runs the same way.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { CONFIG_KEY, LIBRARY_KEY, STAGE_KEY } from '../common/search-attributes';
import { describeConfig, resolveRunConfig, statementPreview } from '../common/run-config';
import { MAIN_TASK_QUEUE, type FormalizeInput, type FormalizeResult, type Progress, type RunConfig, type Stage } from '../common/types';

export interface StartRequest {
  statement: string;
  library: string;
  config?: Partial<RunConfig>;
  exclude?: string[];
  goldPremises?: string[];
  leanTaskQueue?: string;
  goldStatement?: string;
  /** Workflow ID to use; default: `formalize-<uuid>`. A repeated ID never starts a second run. */
  id?: string;
}

export async function startFormalization(client: Client, request: StartRequest, taskQueue = MAIN_TASK_QUEUE): Promise<string> {
  const config = resolveRunConfig(request.config);
  const input: FormalizeInput = {
    statement: request.statement,
    library: request.library,
    config,
    exclude: request.exclude,
    goldPremises: request.goldPremises,
    ...(request.leanTaskQueue ? { leanTaskQueue: request.leanTaskQueue } : {}),
    ...(request.goldStatement ? { goldStatement: request.goldStatement } : {}),
  };
  const id = request.id ?? `formalize-${randomUUID()}`;
  await client.workflow.start('formalize', {
    workflowId: id,
    taskQueue,
    args: [input],
    // A caller-chosen ID names one run for good: repeating it, even after the run closed,
    // never starts another (sweeps count each item exactly once this way).
    ...(request.id ? { workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
    memo: { statement: statementPreview(request.statement) },
    // Shown as the run's summary in the Temporal UI's list and detail views.
    staticSummary: statementPreview(request.statement, 12),
    staticDetails: `library ${request.library} · ${describeConfig(config)}`,
    typedSearchAttributes: new TypedSearchAttributes([
      { key: STAGE_KEY, value: 'starting' },
      { key: LIBRARY_KEY, value: request.library },
      { key: CONFIG_KEY, value: describeConfig(config) },
    ]),
  });
  return id;
}

const QUERY_TIMEOUT_MS = 1500;

export type RunStatus = 'running' | 'completed' | 'failed';

export interface RunView {
  id: string;
  status: RunStatus;
  progress: Progress | null;
  result?: FormalizeResult;
  error?: string;
}

function failureMessage(err: unknown): string {
  // Walk to the root cause: the activity's own message is what tells the user what to do.
  let current = err as { message?: string; cause?: unknown } | undefined;
  let message = current?.message ?? String(err);
  while (current?.cause) {
    current = current.cause as { message?: string; cause?: unknown };
    if (current.message) message = current.message;
  }
  return message;
}

/** The run's state, or null when no run has that ID. */
export async function getFormalization(client: Client, id: string): Promise<RunView | null> {
  const handle = client.workflow.getHandle(id);
  let description;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
  const status = description.status.name;
  if (status === 'RUNNING') {
    // The query needs a live worker; when none answers soon, the stage search attribute (set by
    // the workflow at every stage) still tells where the run is.
    const fallback: Progress = { stage: (description.typedSearchAttributes.get(STAGE_KEY) as Stage | undefined) ?? 'starting', round: 0, completed: [] };
    const progress = await Promise.race([
      handle.query<Progress>('progress').catch(() => fallback),
      new Promise<Progress>((resolve) => setTimeout(() => resolve(fallback), QUERY_TIMEOUT_MS).unref()),
    ]);
    return { id, status: 'running', progress };
  }
  if (status === 'COMPLETED') {
    const result = (await handle.result()) as FormalizeResult;
    return { id, status: 'completed', progress: { stage: 'done', round: result.attempts.length - 1, completed: result.stages ?? [] }, result };
  }
  let error = `run ended with status ${status}`;
  try {
    await handle.result();
  } catch (err) {
    error = failureMessage(err);
  }
  return { id, status: 'failed', progress: null, error };
}
