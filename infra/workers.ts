// Builds the kinds of worker: the main queue (workflows + LLM and retrieval stages), the `lean`
// queue (compile checks, with concurrency matched to the Lean side), and one `llm-<provider>`
// queue per LLM provider (the LLM stages, under the provider's rate limit).
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE, type LeanActivities, type MainActivities } from '../common/activities';
import { llmTaskQueue } from '../common/run-config-schema';
import { LLM_ACTIVITY_NAMES } from '../common/stages';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** Bundles the workflows once into `file` (written by rename), for worker processes to load
 * with `DRIFTLINE_WORKFLOW_BUNDLE` instead of each bundling them again. */
export async function writeWorkflowBundle(file: string): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  await mkdir(dirname(file), { recursive: true });
  await writeFile(`${file}.tmp`, code);
  await rename(`${file}.tmp`, file);
  return file;
}

export interface MainWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  activities: MainActivities;
  taskQueue?: string;
  /** A prebuilt bundle (tests build one and share it); default: bundle WORKFLOWS_PATH. */
  workflowBundle?: WorkflowBundleOption;
  maxConcurrentActivityTaskExecutions?: number;
  /** Workflows kept in memory between tasks (the SDK's default unless set); 0 replays a
   * workflow's whole history at every task (tests use it to prove replay is deterministic). */
  maxCachedWorkflows?: number;
}

export async function createMainWorker(options: MainWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue ?? MAIN_TASK_QUEUE,
    activities: options.activities,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions ?? 16,
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
  });
}

export interface LeanWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  activities: LeanActivities;
  taskQueue?: string;
  /** How many checks run at once; matches the number of REPL processes. */
  concurrency?: number;
}

export async function createLeanWorker(options: LeanWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue ?? LEAN_TASK_QUEUE,
    activities: options.activities,
    maxConcurrentActivityTaskExecutions: options.concurrency ?? 1,
  });
}

export { LLM_ACTIVITY_NAMES };

export function llmActivities(all: MainActivities): Pick<MainActivities, (typeof LLM_ACTIVITY_NAMES)[number]> {
  return Object.fromEntries(LLM_ACTIVITY_NAMES.map((name) => [name, all[name]])) as Pick<
    MainActivities,
    (typeof LLM_ACTIVITY_NAMES)[number]
  >;
}

export interface LlmWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  activities: MainActivities;
  /** The provider's name: the worker polls `llm-<provider>`. */
  provider: string;
  /** The provider's rate limit. Temporal's matching service enforces it for the task queue as a
   * whole, whichever worker polls, so it holds for the deployment rather than per process. */
  requestsPerSecond?: number;
  /** A queue name other than `llm-<provider>` (tests keep suites apart). */
  taskQueue?: string;
  maxConcurrentActivityTaskExecutions?: number;
}

export async function createLlmWorker(options: LlmWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue ?? llmTaskQueue(options.provider),
    activities: llmActivities(options.activities),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions ?? 16,
    ...(options.requestsPerSecond !== undefined ? { maxTaskQueueActivitiesPerSecond: options.requestsPerSecond } : {}),
  });
}
