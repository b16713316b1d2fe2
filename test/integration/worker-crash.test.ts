// Durability: a worker process is killed with SIGKILL in the middle of a run and started again;
// the run completes and no stage that had finished runs again. Every stage's executions are
// counted twice over: at the fakes (LLM requests per role, checks the fake REPL received) and
// from the history (the attempt each activity finished on; a retry adds no scheduled event).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, workflowBundleFile, type TestStack } from '../helpers/stack';
import { activityRuns, attemptsOf } from '../helpers/history';
import { FAKE_MODELS } from '../fakes/openai-server';
import { PROBE_MAX_TOKENS } from '../../engines/llm/probe';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';

const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const GOOD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';
const STATEMENT = 'If p is a prime number then p is at least 2.';

let env: TestWorkflowEnvironment;
let work: string;
let bundleFile: string;
const stacks: TestStack[] = [];
const repls: FakeRepl[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  env = await startTemporal();
  work = mkdtempSync(join(tmpdir(), 'driftline-crash-'));
  writeFileSync(join(work, 'none.json'), '{}');
  // Built once here and loaded by every worker process below: a cold bundle per process is
  // slow on a loaded machine and would eat into the run's timeouts.
  bundleFile = await workflowBundleFile(work);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const s of stacks) await s.close();
  for (const r of repls) r.cleanup();
  await env?.teardown();
  rmSync(work, { recursive: true, force: true });
});

/** The real `driftline worker --queue <queue>` process, configured through the environment. */
function startWorker(stack: TestStack, queue: 'main' | 'lean', extra: NodeJS.ProcessEnv = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', queue], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      DRIFTLINE_DATA_DIR: stack.dataDir,
      DRIFTLINE_CONFIG: join(work, 'none.json'), // no config file of the checkout
      DRIFTLINE_WORKFLOW_BUNDLE: bundleFile,
      OPENAI_BASE_URL: stack.llm.url,
      OPENAI_API_KEY: 'test-key',
      DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
      DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
      DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
      ...extra,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Checks the fake REPL received, answered or not (it serves only the compile stage here). */
const compilesOf = (repl: FakeRepl) => repl.count('begin');

/** Requests a stage made to a model: a main worker's start-up probe of the provider's
 * structured-output mode (max_tokens 16, the decomposer's model) is no stage. */
function stageCallsOf(stack: TestStack, model: string): number {
  return stack.llm.requests.filter((r) => r.model === model && r.body.max_tokens !== PROBE_MAX_TOKENS).length;
}

describe('kill -9 mid-run', () => {
  it('of the main worker mid-formalize: the run completes and every finished stage ran exactly once', async () => {
    const stack = await createStack(env, { queue: 'default' });
    stacks.push(stack);
    // The first formalizer call hangs long enough for the worker to die during it.
    stack.llm.script(FAKE_MODELS.formalizer, { content: GOOD, delayMs: 60_000 });
    const [leanWorker] = await stack.createWorkers('lean');
    const leanRun = leanWorker!.run();
    try {
      const first = startWorker(stack, 'main');
      const id = await stack.start(STATEMENT);
      await until(() => stack.llm.callsTo(FAKE_MODELS.formalizer) === 1, 90_000, 'the formalize stage to start');
      await kill(first);

      startWorker(stack, 'main');
      const result = await stack.result(id);
      expect(result.compiled).toBe(true);
      expect(result.judge?.faithful).toBe(true);

      // At the fakes: one decomposition, one compile, one judgement; the interrupted formalize
      // was asked twice (the killed attempt and its retry).
      expect(stageCallsOf(stack, FAKE_MODELS.decomposer)).toBe(1);
      expect(stageCallsOf(stack, FAKE_MODELS.formalizer)).toBe(2);
      expect(stageCallsOf(stack, FAKE_MODELS.judge)).toBe(1);
      expect(compilesOf(stack.repl!)).toBe(1);
      // In the history: retrieve and illustrate (no fake sees them) finished on their first
      // attempt, like every other stage but the one that was running.
      expect(attemptsOf(await activityRuns(stack.client, id))).toEqual([
        'decompose×1',
        'retrieve×1',
        'illustrate×1',
        'formalize×2',
        'compile×1',
        'judge×1',
        'llmUsage×1',
      ]);
    } finally {
      for (const child of children.splice(0)) await kill(child);
      leanWorker!.shutdown();
      await leanRun;
    }
  }, 180_000);

  it('of the Lean worker mid-compile: the compile is retried on a new worker and nothing else runs again', async () => {
    const repl = fakeRepl({ bodyDelayMs: 120_000 }); // the first compile never finishes
    repls.push(repl);
    const stack = await createStack(env, { queue: 'default', repl: false });
    stacks.push(stack);
    const leanEnv = { LEAN_REPL_CMD: repl.command, ...repl.sandboxEnv, LEAN_POOL_SIZE: '1' };
    const [mainWorker] = await stack.createWorkers('main');
    const mainRun = mainWorker!.run();
    const fakeRepls = () => [
      ...new Set(
        repl
          .events()
          .filter((e) => e.event === 'start')
          .map((e) => e.pid),
      ),
    ];
    try {
      const first = startWorker(stack, 'lean', leanEnv);
      const id = await stack.start(STATEMENT);
      await until(() => compilesOf(repl) === 1, 90_000, 'the compile to reach the REPL');
      await kill(first);
      // The REPL processes of the dead worker would answer late into the same log: stop them.
      for (const pid of fakeRepls()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      const before = new Set(fakeRepls());

      repl.rescript({}); // the new worker's REPL answers at once
      startWorker(stack, 'lean', leanEnv);
      const result = await stack.result(id);
      expect(result.compiled).toBe(true);
      expect(result.judge?.faithful).toBe(true);

      // The compile reached Lean twice, the second time on a REPL of the new worker.
      expect(compilesOf(repl)).toBe(2);
      const answered = repl.events().filter((e) => e.event === 'body');
      expect(answered).toHaveLength(1);
      expect(before.has(answered[0]!.pid)).toBe(false);
      // Nothing before the compile ran again, and the judge ran once.
      expect(stageCallsOf(stack, FAKE_MODELS.decomposer)).toBe(1);
      expect(stageCallsOf(stack, FAKE_MODELS.formalizer)).toBe(1);
      expect(stageCallsOf(stack, FAKE_MODELS.judge)).toBe(1);
      expect(attemptsOf(await activityRuns(stack.client, id))).toEqual([
        'decompose×1',
        'retrieve×1',
        'illustrate×1',
        'formalize×1',
        'compile×2',
        'judge×1',
        'llmUsage×1',
      ]);
    } finally {
      for (const child of children.splice(0)) await kill(child);
      mainWorker!.shutdown();
      await mainRun;
    }
  }, 180_000);
});
