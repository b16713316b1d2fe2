// Worker processes as a deployment runs them (`driftline worker --queue main|lean`), each its own
// OS process against one Temporal server, for the multi-worker test and benchmark.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { loadConfig } from '../../infra/config';
import { createIndexRegistry } from '../../infra/deps';
import { FAKE_MODELS } from '../fakes/openai-server';
import { FIXTURE_CORPUS, FIXTURE_LIBRARY } from './stack';

import { freePort } from './ports';

/** Free loopback ports outside the kernel's ephemeral range (helpers/ports.ts). */
export { freePort };

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { TaskQueueKind, TaskQueueType } = proto.temporal.api.enums.v1;

export interface WorkerEnvOptions {
  temporalAddress: string;
  namespace?: string;
  dataDir: string;
  llmUrl: string;
  replCmd: string;
  /** LEAN_SANDBOX_READ/WRITE for the fake REPL (its harness's `sandboxEnv`). */
  replSandboxEnv?: Record<string, string>;
  leanPoolSize?: number;
}

/** The environment of a worker process: the fixture library, the fake LLM and the fake REPL. */
export function workerEnv(options: WorkerEnvOptions): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_NAMESPACE: options.namespace ?? 'default',
    DRIFTLINE_DATA_DIR: options.dataDir,
    DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
    OPENAI_BASE_URL: options.llmUrl,
    OPENAI_API_KEY: 'test-key',
    DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
    DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
    DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
    LEAN_REPL_CMD: options.replCmd,
    ...options.replSandboxEnv,
    LEAN_POOL_SIZE: String(options.leanPoolSize ?? 1),
    DRIFTLINE_LOG_PRETTY: '0',
    DRIFTLINE_LOG_LEVEL: 'warn',
  };
}

/** Builds the library's index before any worker starts, as `npm start` does, so that several
 * main workers sharing a data directory only ever open it. */
export async function prebuildIndex(env: NodeJS.ProcessEnv): Promise<string> {
  const registry = createIndexRegistry(loadConfig({ env }));
  try {
    return (await registry.open(FIXTURE_LIBRARY)).version;
  } finally {
    await registry.close();
  }
}

export interface WorkerProcess {
  queue: 'main' | 'lean' | 'llm';
  child: ChildProcess;
  pid: number;
  /** What the process printed so far. */
  output(): string;
  /** Prometheus endpoint, when started with one. */
  metricsUrl?: string;
  /** Temporal's default worker identity: `<pid>@<host>`. */
  identityPrefix: string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export async function spawnWorker(
  queue: 'main' | 'lean' | 'llm',
  env: NodeJS.ProcessEnv,
  opts: { metrics?: boolean } = {},
): Promise<WorkerProcess> {
  const metricsPort = opts.metrics ? await freePort() : undefined;
  const child = spawn(process.execPath, [join(ROOT, 'bin/driftline.js'), 'worker', '--queue', queue], {
    cwd: ROOT,
    env: { ...env, ...(metricsPort ? { DRIFTLINE_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    queue,
    child,
    pid: child.pid!,
    output: () => output,
    ...(metricsPort ? { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` } : {}),
    identityPrefix: `${child.pid}@`,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Identities polling a task queue (workflow tasks for `main`, activity tasks for `lean`). */
export async function pollers(client: Client, namespace: string, queue: string, type: 'workflow' | 'activity'): Promise<string[]> {
  const response = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: queue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: type === 'workflow' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return (response.pollers ?? []).map((p) => p.identity ?? '');
}

/** Waits until every given worker process polls its queue. */
export async function waitForWorkers(
  client: Client,
  namespace: string,
  workers: WorkerProcess[],
  queues: { main: string; lean: string },
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [main, lean] = await Promise.all([
      pollers(client, namespace, queues.main, 'workflow'),
      pollers(client, namespace, queues.lean, 'activity'),
    ]);
    const missing = workers.filter((w) => !(w.queue === 'main' ? main : lean).some((id) => id.startsWith(w.identityPrefix)));
    if (missing.length === 0) return;
    const dead = missing.find((w) => w.child.exitCode !== null);
    if (dead) throw new Error(`the ${dead.queue} worker exited (${dead.child.exitCode}):\n${dead.output()}`);
    if (Date.now() > deadline) {
      throw new Error(`workers not polling after ${timeoutMs} ms: ${missing.map((w) => `${w.queue} ${w.pid}:\n${w.output()}`).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
