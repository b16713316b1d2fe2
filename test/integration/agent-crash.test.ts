// Durability of agent mode: the main worker process is killed with SIGKILL in the middle of the
// loop and started again; the run completes and no LLM step that had completed is asked again.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { answer, FAKE_MODELS, toolCall } from '../fakes/openai-server';
import { activityTypesOf } from '../helpers/history';

const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const GOOD = 'import Mathlib\n\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';

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
      DRIFTLINE_MODEL_AGENT: FAKE_MODELS.agent,
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

it('completes an agent run whose main worker was SIGKILLed mid-loop, asking no completed step again', async () => {
  stack.llm.script(
    FAKE_MODELS.agent,
    toolCall('write_file', { code: GOOD }),
    toolCall('run_lean'),
    // Step 3 hangs long enough for the worker to die during it; its retry gets the next reply.
    toolCall('inspect_name', { name: 'Nat.Prime' }, { delayMs: 60_000 }),
    toolCall('inspect_name', { name: 'Nat.Prime' }),
    answer(),
  );
  const [leanWorker] = await stack.createWorkers('lean');
  const leanRun = leanWorker!.run();

  const first = startMainWorker();
  const id = await stack.start('If p is a prime number then p is at least 2.', { mode: 'agent' });
  await until(() => stack.llm.callsTo(FAKE_MODELS.agent) === 3, 60_000, 'the third agent step to start');
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));

  startMainWorker();
  const result = await stack.result(id);
  leanWorker!.shutdown();
  await leanRun;

  expect(result.agent!.ending).toBe('success');
  expect(result.steps!.map((s) => s.tool)).toEqual(['write_file', 'run_lean', 'inspect_name', null]);
  // Requests by conversation length: steps 1 and 2 (done before the kill) once each, the
  // interrupted step 3 twice (Temporal retried it), step 4 once.
  const lengths = stack.llm.requests.filter((r) => r.model === FAKE_MODELS.agent).map((r) => r.messages.length);
  expect(lengths).toEqual([2, 4, 6, 6, 8]);
  // The Lean tools that had run were not run again either.
  const history = await stack.client.workflow.getHandle(id).fetchHistory();
  expect(activityTypesOf(history)).toEqual([
    'agentStep',
    'screenStatement',
    'agentStep',
    'compile',
    'agentStep',
    'inspectName',
    'agentStep',
    'judge',
    'llmUsage',
  ]);
  expect(stack.llm.callsTo(FAKE_MODELS.judge)).toBe(1);
}, 180_000);
