import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient, type LlmClient } from '../../engines/llm/client';
import { LLM_FAILURE } from '../../common/failures';
import { decomposeStatement, formalizeStatement, judgeStatement } from '../../engines/llm/stages';
import { FAKE_MODELS, judgeByRule, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';

let fake: FakeOpenAI;
let llm: LlmClient;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  llm = createLlmClient({ baseURL: fake.url, models: FAKE_MODELS, timeoutMs: 2000, maxReasks: 1 });
});
afterAll(() => fake.close());
afterEach(() => {
  fake.requests.length = 0;
});

const statement = 'If p is a prime and p divides a*b, then p divides a or p divides b.';

describe('LLM stages with the default fake brain', () => {
  it('decomposes a statement into sub-queries found in it', async () => {
    const subqueries = await decomposeStatement(llm, statement);
    expect(subqueries).toContainEqual({ phrase: 'p is a prime number', formal: 'Nat.Prime p' });
    expect(subqueries).toContainEqual({ phrase: 'a divides b', formal: 'a ∣ b' });
    expect(fake.callsTo(FAKE_MODELS.decomposer)).toBe(1);
    expect(fake.requests[0]!.response_format?.json_schema?.name).toBe('decomposition');
  });

  it('formalizes to a single statement ending in := by sorry', async () => {
    const lean = await formalizeStatement(llm, { statement, premises: [], examples: [] });
    expect(lean).toBe('theorem fake_formalization (p : ℕ) (hp : Nat.Prime p) (h1 : a ∣ b) : 2 ≤ p := by sorry');
    expect(fake.callsTo(FAKE_MODELS.formalizer)).toBe(1);
  });

  it('judges by meaning: a statement that says the same is faithful, one that misses a concept is not', async () => {
    const same = 'theorem t (p a b : ℕ) (hp : Nat.Prime p) (h : p ∣ a * b) : p ∣ a ∨ p ∣ b := by sorry';
    expect(await judgeStatement(llm, { statement, formalStatement: same, compiled: true })).toMatchObject({ grade: 10, faithful: true });
    const vacuous = await judgeStatement(llm, { statement, formalStatement: 'theorem t : True := by sorry', compiled: true });
    expect(vacuous.faithful).toBe(false);
    expect(vacuous.grade).toBeLessThan(9);
  });

  it('never calls a statement Lean refused faithful, even when the model grades its meaning 10', async () => {
    // The fake judge grades meaning only and ignores "Accepted by Lean: no": the cap and the
    // verdict come from enforceVerdict.
    const same = 'theorem t (p a b : ℕ) (hp : Nat.Prime p) (h : p ∣ a * b) : p ∣ a ∨ p ∣ b := by sorry';
    const bad = await judgeStatement(llm, { statement, formalStatement: same, compiled: false });
    expect(judgeByRule(statement, same)).toMatchObject({ grade: 10, faithful: true }); // what the model answered
    expect(bad).toMatchObject({ grade: 3, faithful: false });
  });

  it('never calls a statement faithful that Lean did not check: meaning graded, the reason said', async () => {
    // Any caller of the engine gets the rule (the judge-eval command as much as the activity).
    const same = 'theorem t (p a b : ℕ) (hp : Nat.Prime p) (h : p ∣ a * b) : p ∣ a ∨ p ∣ b := by sorry';
    const unchecked = await judgeStatement(llm, { statement, formalStatement: same, compiled: false, checked: false });
    expect(unchecked).toMatchObject({ grade: 10, faithful: false });
    expect(unchecked.explanation).toMatch(/Not compiled: no Lean REPL is configured/);
    expect(fake.requests.at(-1)!.messages.at(-1)!.content).toContain('Accepted by Lean: yes');
  });

  it('never calls a statement faithful that the screen refused before Lean; graded as not compiled, the refusal said', async () => {
    const same = 'theorem t (p a b : ℕ) (hp : Nat.Prime p) (h : p ∣ a * b) : p ∣ a ∨ p ∣ b := by sorry';
    const refused = await judgeStatement(llm, {
      statement,
      formalStatement: same,
      compiled: true,
      checked: true,
      refused: '`#eval` runs code',
    });
    expect(refused).toMatchObject({ grade: 3, faithful: false });
    expect(refused.explanation).toMatch(/Refused by the statement screen before Lean.*`#eval` runs code/);
    expect(fake.requests.at(-1)!.messages.at(-1)!.content).toContain('Accepted by Lean: no');
  });
});

describe('LLM stages with scripted replies', () => {
  it('re-asks the formalizer when its reply holds no theorem', async () => {
    fake.script(
      FAKE_MODELS.formalizer,
      { content: 'This statement is hard.' },
      { content: '```lean\nimport Mathlib\ntheorem t (a : ℤ) : a = a := by rfl\n```' },
    );
    const lean = await formalizeStatement(llm, { statement: 'a = a', premises: [], examples: [] });
    expect(lean).toBe('theorem t (a : ℤ) : a = a := by sorry');
    expect(fake.callsTo(FAKE_MODELS.formalizer)).toBe(2);
    expect(fake.requests[1]!.messages.at(-1)!.content).toContain('no Lean `theorem`');
  });

  it('applies the rubric rules to what the judge model says', async () => {
    fake.script(FAKE_MODELS.judge, { content: '{"grade": 10, "faithful": true, "explanation": "same"}' });
    const verdict = await judgeStatement(llm, { statement, formalStatement: 'theorem t : False := by sorry', compiled: false });
    expect(verdict).toEqual({ grade: 3, faithful: false, explanation: 'same' });
  });

  it('gives up with LlmBadReply when the decomposer never returns valid JSON', async () => {
    fake.script(FAKE_MODELS.decomposer, { content: '{"subqueries": []}' }, { content: 'nothing' });
    await expect(decomposeStatement(llm, statement)).rejects.toMatchObject({ type: LLM_FAILURE.badReply, nonRetryable: true });
    expect(fake.callsTo(FAKE_MODELS.decomposer)).toBe(2);
  });
});

describe('the default brain without role model names', () => {
  it('recognizes the stage from the prompt itself', async () => {
    const generic = createLlmClient({
      baseURL: fake.url,
      models: { decomposer: 'm', formalizer: 'm', judge: 'm' },
      timeoutMs: 2000,
      maxReasks: 0,
    });
    expect((await decomposeStatement(generic, 'Every even number squared is even.')).map((q) => q.formal)).toContain('Even n');
    expect(await formalizeStatement(generic, { statement: 'n is even', premises: [], examples: [] })).toContain('Even');
    const same = 'theorem t (p a b : ℕ) (hp : Nat.Prime p) (h : p ∣ a * b) : p ∣ a ∨ p ∣ b := by sorry';
    expect((await judgeStatement(generic, { statement, formalStatement: same, compiled: true })).grade).toBe(10);
  });
});
