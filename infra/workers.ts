// Builds the two kinds of worker: the main queue (workflows + LLM and retrieval stages) and
// the `lean` queue (compile checks, with concurrency matched to the Lean side).
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE, type LeanActivities, type MainActivities } from '../common/types';

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
}

export async function createMainWorker(options: MainWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue ?? MAIN_TASK_QUEUE,
    activities: options.activities,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions ?? 16,
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
