// The repair loop uses the Lean name tools: on the real Temporal dev server, with the fake LLM
// and the fake REPL, an unknown identifier in the first attempt is resolved by the Lean worker
// and the formalizer repairs it from the suggestion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { defaultBrain, FAKE_MODELS, type FakeRequest } from '../fakes/openai-server';
import { activityTypesOf } from '../helpers/history';

const STATEMENT = 'If p is a prime number then p is at least 2.';
const GOOD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';
const BAD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Primee p) : 2 ≤ p := by sorry\n```';

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

beforeAll(async () => {
  env = await startTemporal();
});
afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

/** The formalizer only gets the name right once the repair prompt carries the suggestion. */
function formalizerNeedingSuggestion(req: FakeRequest) {
  if (req.model !== FAKE_MODELS.formalizer) return defaultBrain(req);
  const last = JSON.stringify(req.messages[req.messages.length - 1]);
  return { content: /- Nat\.Primee: Nat\.Prime\b/.test(last) ? GOOD : BAD };
}

async function activityTypes(s: TestStack, id: string): Promise<string[]> {
  return activityTypesOf(await s.client.workflow.getHandle(id).fetchHistory());
}

describe('repair with Lean name tools', () => {
  it('resolves an unknown identifier on the Lean queue and repairs the statement with the suggestion', async () => {
    const s = await createStack(env, { repl: { unknownIdentifiers: ['Nat.Primee'] }, llm: { handler: formalizerNeedingSuggestion } });
    stacks.push(s);
    const id = await s.start(STATEMENT, { repairRounds: 2 });
    const result = await s.withWorkers(() => s.result(id));

    expect(result.compiled).toBe(true);
    expect(result.attempts).toHaveLength(2);
    expect(result.attempts[0]!.statement).toContain('Nat.Primee');
    expect(result.attempts[1]!.statement).toContain('Nat.Prime p');
    expect(result.tools).toEqual([{ tool: 'resolveName', round: 1, input: 'Nat.Primee', output: expect.arrayContaining(['Nat.Prime']) }]);
    expect(result.tools![0]!.output[0]).toBe('Nat.Prime');
    expect(await activityTypes(s, id)).toEqual([
      'decompose',
      'retrieve',
      'illustrate',
      'formalize',
      'compile',
      'resolveName',
      'repair',
      'compile',
      'judge',
      'llmUsage',
    ]);
    // The suggestion was confirmed by Lean (`#check`) on the fake REPL, not only found in the index.
    expect(s.repl!.events().some((e) => e.event === 'body')).toBe(true);
  });

  it('repairs without suggestions when the index has nothing close, and records the empty lookup', async () => {
    const s = await createStack(env, { repl: { unknownIdentifiers: ['Zqxv.wvut'] } });
    stacks.push(s);
    s.llm.script(
      FAKE_MODELS.formalizer,
      { content: '```lean\ntheorem t (p : ℕ) (hp : Zqxv.wvut p) : 2 ≤ p := by sorry\n```' },
      { content: GOOD },
    );
    const id = await s.start(STATEMENT, { repairRounds: 1 });
    const result = await s.withWorkers(() => s.result(id));
    expect(result.compiled).toBe(true);
    expect(result.tools).toEqual([{ tool: 'resolveName', round: 1, input: 'Zqxv.wvut', output: [] }]);
    const repair = JSON.stringify(s.llm.requests.filter((r) => r.model === FAKE_MODELS.formalizer)[1]!.messages);
    expect(repair).not.toContain('real library names close to them');
  });
});
