// Durability: the main worker process is killed with SIGKILL in the middle of a run and started
// again; the run completes and no stage that had completed runs again.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from './helpers/stack';
import { FAKE_MODELS } from './fakes/openai-server';

const CLI = fileURLToPath(new URL('../bin/cli.ts', import.meta.url));
const GOOD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';

let env: TestWorkflowEnvironment;
let stack: TestStack;
const children: ChildProcess[] = [];

beforeAll(async () => {
  env = await startTemporal();
  stack = await createStack(env, { queue: 'default' });
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await stack?.close();
  await env?.teardown();
});

/** The real `driftline worker --queue main` process, configured through the environment. */
function startMainWorker(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', 'main'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      DRIFTLINE_DATA_DIR: stack.dataDir,
      OPENAI_BASE_URL: stack.llm.url,
      OPENAI_API_KEY: 'test-key',
      DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
      DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
      DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('completes a run whose main worker was SIGKILLed mid-stage, without re-running finished stages', async () => {
  // The first formalizer call hangs long enough for the worker to die during it.
  stack.llm.script(FAKE_MODELS.formalizer, { content: GOOD, delayMs: 60_000 });
  const [leanWorker] = await stack.createWorkers('lean');
  const leanRun = leanWorker!.run();

  const first = startMainWorker();
  const id = await stack.start('If p is a prime number then p is at least 2.');
  await until(() => stack.llm.callsTo(FAKE_MODELS.formalizer) === 1, 60_000, 'the formalize stage to start');
  expect(stack.llm.callsTo(FAKE_MODELS.decomposer)).toBe(1);
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));

  startMainWorker();
  const result = await stack.result(id);
  leanWorker!.shutdown();
  await leanRun;

  expect(result.compiled).toBe(true);
  expect(result.judge?.faithful).toBe(true);
  // Finished stages are not repeated: one decomposition, one judge; the interrupted draftStatement
  // is retried once by Temporal.
  expect(stack.llm.callsTo(FAKE_MODELS.decomposer)).toBe(1);
  expect(stack.llm.callsTo(FAKE_MODELS.formalizer)).toBe(2);
  expect(stack.llm.callsTo(FAKE_MODELS.judge)).toBe(1);
  const history = await stack.client.workflow.getHandle(id).fetchHistory();
  const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
  expect(scheduled).toEqual(['decompose', 'retrieve', 'illustrate', 'draftStatement', 'compile', 'judge']);
}, 120_000);
