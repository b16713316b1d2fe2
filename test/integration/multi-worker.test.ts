// Several worker machines, simulated: two main workers and two Lean workers, each its own
// process (`driftline worker --queue …`), against one Temporal server. One of each is killed
// (SIGKILL, as a machine dies) while it holds work in the middle of a batch; every run still
// completes, exactly once, and each stage's result is recorded once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startFormalization } from '../../client/runs';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE } from '../../common/activities';
import type { FormalizeResult } from '../../common/run-types';
import { defaultBrain, startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../fakes/openai-server';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { FIXTURE_LIBRARY, startTemporal } from '../helpers/stack';
import { prebuildIndex, spawnWorker, waitForWorkers, workerEnv, type WorkerProcess } from '../helpers/worker-processes';

const RUNS = 8;
const STATEMENTS = [
  'If p is a prime number then p is at least 2.',
  'Every prime greater than 2 is odd.',
  'The sum of two even numbers is even.',
  'A prime number has exactly two divisors.',
];

let env: TestWorkflowEnvironment;
let client: Client;
let llm: FakeOpenAI;
let repl: FakeRepl;
let dataDir: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  env = await startTemporal();
  client = env.client;
  // Slow enough that work is in flight on every worker when one of each is killed.
  llm = await startFakeOpenAI({ handler: async (req) => ({ ...(await defaultBrain(req)), delayMs: 700 }) as FakeReply });
  repl = fakeRepl({ bodyDelayMs: 1500, headerDelayMs: 200 });
  dataDir = mkdtempSync(join(tmpdir(), 'driftline-multi-'));
  const workerEnvironment = workerEnv({
    temporalAddress: env.address,
    dataDir,
    llmUrl: llm.url,
    replCmd: repl.command,
    replSandboxEnv: repl.sandboxEnv,
    leanPoolSize: 1,
  });
  await prebuildIndex(workerEnvironment);
  for (const queue of ['main', 'main', 'lean', 'lean'] as const)
    workers.push(await spawnWorker(queue, workerEnvironment, { metrics: true }));
  await waitForWorkers(client, env.namespace ?? 'default', workers, { main: MAIN_TASK_QUEUE, lean: LEAN_TASK_QUEUE });
}, 240_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await llm?.close();
  repl?.cleanup();
  await env?.teardown();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** A started activity of a running workflow, and the worker process that holds it. */
async function inFlight(ids: string[], type: string, candidates: WorkerProcess[]): Promise<WorkerProcess | undefined> {
  for (const id of ids) {
    const description = await client.workflow
      .getHandle(id)
      .describe()
      .catch(() => undefined);
    if (description?.status.name !== 'RUNNING') continue;
    const raw = description.raw.pendingActivities ?? [];
    for (const activity of raw) {
      if (activity.activityType?.name !== type || !activity.lastStartedTime) continue;
      const holder = candidates.find((w) => activity.lastWorkerIdentity?.startsWith(w.identityPrefix));
      if (holder) return holder;
    }
  }
  return undefined;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('two main and two Lean worker processes, one of each killed mid-batch', () => {
  it('completes every run exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      ids.push(
        await startFormalization(client, {
          statement: STATEMENTS[i % STATEMENTS.length]!,
          library: FIXTURE_LIBRARY,
          id: `multi-worker/run-${i}`,
          config: { repairRounds: 1 },
        }),
      );
    }

    // Kill a main worker while it waits on the LLM for some run, and a Lean worker while it
    // checks a statement: both die holding a started activity.
    const mainVictim = await waitFor('an LLM stage in flight on a main worker', () =>
      inFlight(
        ids,
        'formalize',
        workers.filter((w) => w.queue === 'main'),
      ).then(
        (w) =>
          w ??
          inFlight(
            ids,
            'decompose',
            workers.filter((x) => x.queue === 'main'),
          ),
      ),
    );
    mainVictim.child.kill('SIGKILL');
    const leanVictim = await waitFor('a compile in flight on a Lean worker', () =>
      inFlight(
        ids,
        'compile',
        workers.filter((w) => w.queue === 'lean'),
      ),
    );
    leanVictim.child.kill('SIGKILL');
    await Promise.all([mainVictim.exited, leanVictim.exited]);

    const results = await Promise.all(ids.map((id) => client.workflow.getHandle(id).result() as Promise<FormalizeResult>));
    for (const result of results) {
      expect(result.compiled).toBe(true);
      expect(result.outcome).toBe('faithful');
    }

    // Exactly one execution per run ID, each completed.
    const executions: { id: string; status: string }[] = [];
    for await (const execution of client.workflow.list({ query: 'WorkflowType = "formalize"' })) {
      executions.push({ id: execution.workflowId, status: execution.status.name });
    }
    expect(executions.map((e) => e.id).sort()).toEqual([...ids].sort());
    expect(executions.every((e) => e.status === 'COMPLETED')).toBe(true);

    // Each stage's result was recorded once per run, however many attempts it took, and the
    // work the victims held was finished by the surviving workers.
    let retriedAfterKill = 0;
    for (const id of ids) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      const events = history.events ?? [];
      const scheduled = new Map<string, string>();
      const started = new Map<string, { identity: string; attempt: number }>();
      const completed: string[] = [];
      for (const event of events) {
        const id = String(event.eventId);
        if (event.activityTaskScheduledEventAttributes) scheduled.set(id, event.activityTaskScheduledEventAttributes.activityType!.name!);
        if (event.activityTaskStartedEventAttributes) {
          const a = event.activityTaskStartedEventAttributes;
          started.set(String(a.scheduledEventId), { identity: a.identity ?? '', attempt: a.attempt ?? 1 });
        }
        if (event.activityTaskCompletedEventAttributes) {
          const a = event.activityTaskCompletedEventAttributes;
          completed.push(scheduled.get(String(a.scheduledEventId))!);
          // History keeps the started event of the attempt that completed.
          if (started.get(String(a.scheduledEventId))!.attempt > 1) retriedAfterKill++;
        }
      }
      // (The ledger read, llmUsage, is a local activity: it runs in a workflow task, no task queue.)
      expect(completed).toEqual(['decompose', 'retrieve', 'illustrate', 'formalize', 'compile', 'judge']);
    }
    // At least the two activities the victims held were attempted again elsewhere.
    expect(retriedAfterKill).toBeGreaterThanOrEqual(2);

    // The survivors report how long tasks waited for a worker (what DEPLOY.md says to watch).
    const survivor = workers.find((w) => w.queue === 'lean' && w !== leanVictim)!;
    const metrics = await (await fetch(survivor.metricsUrl!)).text();
    expect(metrics).toMatch(/temporal_activity_schedule_to_start_latency\w*\{[^}]*task_queue="lean"/);
  }, 300_000);
});
