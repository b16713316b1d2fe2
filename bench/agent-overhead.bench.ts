// Orchestration overhead of agent mode per step: the same agent loop over the same activities,
// once as the durable `formalizeAgent` workflow (each LLM step and tool call an activity through
// a Temporal dev server, workers in this process) and once in-process (the activities called
// directly). The fakes answer at once (fake OpenAI provider; the fake REPL without delays), so
// the difference per step is what durability costs: scheduling, history, workflow tasks.
//
//   npx tsx bench/agent-overhead.bench.ts [--json]
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities, createLeanActivities } from '../activities';
import { createLlmClient } from '../engines/llm/client';
import { runAgentLoop } from '../workflows/agent-loop';
import { FAKE_MODELS, toolCall } from '../test/fakes/openai-server';
import { inProcessAgentOps } from '../test/helpers/agent-ops';
import { createStack, FIXTURE_LIBRARY, llmSettings, startTemporal, type TestStack } from '../test/helpers/stack';
import type { AgentToolName } from '../common/run-config-schema';

const json = process.argv.includes('--json');
const STEPS = 30;
const REPEATS = 3;
const STATEMENT = 'If p is a prime number then p is at least 2.';
const GOOD = 'import Mathlib\n\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';
const TOOLS: AgentToolName[] = ['write_file', 'run_lean', 'inspect_name', 'resolve_name', 'search_premises'];

/** One file, then Lean on it every step until the step budget ends the loop. */
function script(s: TestStack): void {
  s.llm.script(FAKE_MODELS.agent, toolCall('write_file', { code: GOOD }), toolCall('run_lean', {}, { repeat: true }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const env: TestWorkflowEnvironment = await startTemporal();
const durableMs: number[] = [];
const inProcessMs: number[] = [];
try {
  for (let r = 0; r < REPEATS; r++) {
    // Durable: the workflow, through Temporal.
    const durable = await createStack(env);
    script(durable);
    const t0 = performance.now();
    const result = await durable.withWorkers(async () =>
      durable.result(await durable.start(STATEMENT, { mode: 'agent', maxSteps: STEPS, judge: false, tools: TOOLS })),
    );
    durableMs.push(performance.now() - t0);
    if (result.agent?.steps !== STEPS) throw new Error(`durable run took ${result.agent?.steps} steps, expected ${STEPS}`);
    await durable.close();

    // In-process: the same loop and activities, called directly.
    const local = await createStack(env);
    script(local);
    const main = createActivities({ llm: createLlmClient(llmSettings(local.llm.url)), indexes: local.indexes });
    const lean = createLeanActivities({ lean: local.lean, timeoutMs: 20_000 });
    const t1 = performance.now();
    const loop = await runAgentLoop(inProcessAgentOps(main, lean, FIXTURE_LIBRARY), {
      statement: STATEMENT,
      tools: TOOLS,
      maxSteps: STEPS,
      tokenBudget: 1e9,
      wallClockSeconds: 600,
    });
    inProcessMs.push(performance.now() - t1);
    if (loop.summary.steps !== STEPS) throw new Error(`in-process loop took ${loop.summary.steps} steps`);
    await local.close();
  }
} finally {
  await env.teardown();
}

const durablePerStep = median(durableMs) / STEPS;
const inProcessPerStep = median(inProcessMs) / STEPS;
const out = {
  steps: STEPS,
  repeats: REPEATS,
  activitiesPerStep: 2,
  durableMsPerStep: Number(durablePerStep.toFixed(2)),
  inProcessMsPerStep: Number(inProcessPerStep.toFixed(2)),
  overheadMsPerStep: Number((durablePerStep - inProcessPerStep).toFixed(2)),
  ratio: Number((durablePerStep / inProcessPerStep).toFixed(2)),
};
if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
else {
  process.stdout.write(`agent loop, ${STEPS} steps (LLM step + run_lean each), median of ${REPEATS}, instant fakes\n`);
  process.stdout.write(`  durable (formalizeAgent via Temporal): ${out.durableMsPerStep} ms/step\n`);
  process.stdout.write(`  in-process (same activities, direct):  ${out.inProcessMsPerStep} ms/step\n`);
  process.stdout.write(`  orchestration overhead:                 ${out.overheadMsPerStep} ms/step (${out.ratio}×)\n`);
}
process.exit(0);
