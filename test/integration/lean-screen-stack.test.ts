// Hostile Lean through the running stack (real Temporal dev server, real workers and
// activities, fake LLM and fake REPL): a formalizer that answers with a command, an agent whose
// write_file carries one, and a run whose goldStatement is one. Each run ends with the refusal
// in its result, and the REPL receives nothing of the hostile text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { answer, FAKE_MODELS, toolCall } from '../fakes/openai-server';

const STATEMENT = 'If p is a prime number then p is at least 2.';
const GOOD = 'theorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';
// Each would run code in front of Lean: read the worker's API key and print it.
const HOSTILE = [
  `open Nat #eval IO.getEnv "OPENAI_API_KEY"\n${GOOD}`,
  `theorem prime_two_le (p : ℕ) (hp : Nat.Prime p#eval IO.getEnv "OPENAI_API_KEY") : 2 ≤ p := by sorry`,
  `set_option maxHeartbeats 400 in #eval IO.getEnv "OPENAI_API_KEY"\n${GOOD}`,
];

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

async function stack(options: Parameters<typeof createStack>[1] = {}): Promise<TestStack> {
  const s = await createStack(env, options);
  stacks.push(s);
  return s;
}

/** Commands the fake REPL answered that were not a header import; and it must have seen no
 * command word driftline never sends (its leak markers). */
const bodies = (s: TestStack) => {
  expect(s.repl!.leaks()).toEqual([]);
  return s.repl!.count('body');
};

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

describe('hostile Lean through the stack', () => {
  it('a formalizer that answers with commands: every attempt refused, the REPL sent nothing', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, ...HOSTILE.map((code) => ({ content: `\`\`\`lean\n${code}\n\`\`\`` })));
    const id = await s.start(STATEMENT, { repairRounds: 2 });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.attempts).toHaveLength(3);
    for (const attempt of result.attempts) {
      expect(attempt.compile.status).toBe('refused');
      expect(attempt.compile.messages[0]!.text).toMatch(/^refused before Lean: /);
    }
    expect(result.compiled).toBe(false);
    expect(result.outcome).toBe('refused');
    // The repair prompt carried the refusal, so the formalizer could act on it.
    const repairs = s.llm.requests.filter((r) => r.model === FAKE_MODELS.formalizer).slice(1);
    expect(repairs.map((r) => JSON.stringify(r.messages))).toEqual(repairs.map(() => expect.stringContaining('refused before Lean')));
    expect(bodies(s)).toBe(0);
  });

  it('an agent whose write_file carries a command: the file is not written, nothing reaches Lean', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.agent, toolCall('write_file', { code: HOSTILE[0]! }), toolCall('run_lean'), answer());
    const id = await s.start(STATEMENT, { mode: 'agent', maxSteps: 4 });
    const result = await s.withWorkers(() => s.result(id));

    const write = result.steps!.find((step) => step.tool === 'write_file')!;
    expect(write.error).toBe(true);
    expect(write.output).toMatch(/refused before Lean: `#eval` runs code/);
    expect(result.compiled).toBe(false);
    expect(bodies(s)).toBe(0);
  });

  it('a hostile goldStatement: the equivalence says it was refused, and only the candidate reached Lean', async () => {
    const s = await stack();
    s.llm.script(FAKE_MODELS.formalizer, { content: `\`\`\`lean\n${GOOD}\n\`\`\`` });
    const id = await s.start(STATEMENT, {}, { goldStatement: HOSTILE[0]! });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(result.equivalence).toMatchObject({
      equivalent: false,
      refused: 'gold',
      reason: expect.stringMatching(/^refused before Lean: the gold statement: `#eval` runs code/),
    });
    // One body: the candidate's own compile. No equivalence check ran.
    expect(bodies(s)).toBe(1);
  });
});
