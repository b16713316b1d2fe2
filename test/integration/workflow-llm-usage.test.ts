// The LLM layer in whole runs (real Temporal dev server, fake OpenAI server, fake REPL): every
// run's result carries the tokens its LLM calls used, equal to what the provider reported; a run
// of the same statement again is answered from the reply cache without a request; a run that
// turns the cache off pays again; a spent budget ends a run `budget-exhausted`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';

const STATEMENT = 'If p is a prime number then p is at least 2.';

let env: TestWorkflowEnvironment;
let s: TestStack;

beforeAll(async () => {
  env = await startTemporal();
  s = await createStack(env, { ledger: true });
});
afterAll(async () => {
  await s?.close();
  await env?.teardown();
});

const sum = (xs: { prompt_tokens: number; completion_tokens: number }[]) => ({
  promptTokens: xs.reduce((a, x) => a + x.prompt_tokens, 0),
  completionTokens: xs.reduce((a, x) => a + x.completion_tokens, 0),
});

describe('LLM usage, the reply cache and budgets in runs', () => {
  it('sums the usage the provider reported; a second run of the same statement costs no request', async () => {
    const served = s.llm.usageServed.length;
    const first = await s.withWorkers(async () => s.result(await s.start(STATEMENT, {}, { id: 'usage-first' })));
    const paid = s.llm.usageServed.slice(served);
    expect(paid.length).toBe(3); // decompose, draft, judge
    const expected = sum(paid);
    expect(first.usage).toEqual({ ...expected, totalTokens: expected.promptTokens + expected.completionTokens });
    expect(first.cache).toEqual({ hits: 0, misses: 3 });
    const memo = (await s.client.workflow.getHandle('usage-first').describe()).memo as Record<string, unknown>;
    expect(memo.usage).toEqual(first.usage);

    const requests = s.llm.requests.length;
    const second = await s.withWorkers(async () => s.result(await s.start(STATEMENT, {}, { id: 'usage-second' })));
    expect(s.llm.requests.length).toBe(requests);
    expect(second.cache).toEqual({ hits: 3, misses: 0 });
    // The same replies: the same statement, verdict and token counts; nothing paid this time
    // (the first run's cost is unknown: the fake's models have no price).
    expect(second.formalStatement).toBe(first.formalStatement);
    expect(second.judge).toEqual(first.judge);
    expect(second.usage).toEqual({ ...first.usage, costUsd: 0 });
  }, 120_000);

  it('asks the provider again for a run with the cache off, another sample, or another temperature', async () => {
    await s.withWorkers(async () => s.result(await s.start(STATEMENT, {}, { id: 'usage-warm' })));
    for (const [id, config, extra] of [
      ['usage-nocache', { cache: false }, {}],
      ['usage-sample', {}, { sample: 1 }],
      ['usage-temp', { temperature: 0.9 }, {}],
    ] as const) {
      const before = s.llm.requests.length;
      const r = await s.withWorkers(async () => s.result(await s.start(STATEMENT, config, { id, ...extra })));
      expect(s.llm.requests.length - before, id).toBe(3);
      expect(r.cache, id).toEqual({ hits: 0, misses: 3 });
    }
    expect(s.llm.requests.at(-1)!.body.temperature).toBe(0.9);
  }, 180_000);

  it('ends a run budget-exhausted when its token budget is spent, with what it had so far', async () => {
    const r = await s.withWorkers(async () =>
      s.result(
        await s.start(
          'Every even number greater than two is a sum of two primes.',
          { tokenBudget: 1, cache: false },
          { id: 'usage-budget' },
        ),
      ),
    );
    expect(r.outcome).toBe('budget-exhausted');
    // decompose ran (the budget is checked before each call), the draft was refused.
    expect(r.subqueries.length).toBeGreaterThan(0);
    expect(r.attempts).toEqual([]);
    expect(r.notes.join('\n')).toMatch(/token budget is spent/);
    expect(r.usage!.totalTokens).toBeGreaterThan(1);
  }, 120_000);
});
