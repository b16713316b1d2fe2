// One LLM activity must have room for everything one call can lead to: waiting on the start
// probe, the structured-output fallbacks and every re-ask, each up to the per-call timeout.
// Otherwise Temporal cuts the last re-ask off with nothing logged. The workflow's start-to-close
// timeout is derived from the settings the run was started with (common/llm-call-policy.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createLlmClient } from '../../engines/llm/client';
import { askStructured } from '../../engines/llm/ask-parsed';
import { startFormalization } from '../../client/runs';
import { LLM_FAILURE } from '../../common/failures';
import { EngineError } from '../../engines/errors';
import { llmActivityTimeoutMs, llmCallsPerActivity } from '../../common/llm-call-policy';
import { loadConfig } from '../../infra/config';
import type { RunConfig } from '../../common/run-config-schema';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { defaultBrain, FAKE_MODELS, startFakeOpenAI, type FakeHandler } from '../fakes/openai-server';

const Answer = z.object({ answer: z.number().int() });

/** Refuses both response formats; then answers each model badly `bad` times, then well. */
function worstServer(bad: number, delayMs = 0): FakeHandler {
  const answered = new Map<string, number>();
  return async (req) => {
    if (req.response_format) return { status: 400, message: `response_format ${req.response_format.type} is not supported`, delayMs };
    const n = answered.get(req.model) ?? 0;
    answered.set(req.model, n + 1);
    if (n < bad) return { content: 'not what was asked for', delayMs };
    const good = await defaultBrain(req);
    return { ...good, delayMs };
  };
}

/**
 * The most time slots (each up to one call timeout) one structured call can take, counted
 * against a real client and server: a start probe that hangs when the call starts, both formats
 * refused, and an unusable reply on every try.
 */
async function worstCaseSlots(maxReasks: number): Promise<number> {
  const refuseAll = worstServer(Number.POSITIVE_INFINITY);
  let first = true;
  const fake = await startFakeOpenAI({
    handler: (req) => {
      // The probe's first request hangs past the call timeout.
      if (first) {
        first = false;
        return { content: '{"answer": 4}', delayMs: 8000 };
      }
      return refuseAll(req);
    },
  });
  try {
    const llm = createLlmClient({ baseURL: fake.url, models: FAKE_MODELS, timeoutMs: 2000, maxReasks });
    const probe = llm.probe();
    const question = 'How many sides has a square?';
    const failure = await askStructured(llm, 'decomposer', [{ role: 'user', content: question }], Answer, 'answer').then(
      () => undefined,
      (err: unknown) => err,
    );
    // It ends the way the worst case ends: every try used, no usable reply.
    expect((failure as EngineError | undefined)?.type).toBe(LLM_FAILURE.badReply);
    await probe;
    const sent = fake.requests.filter((r) => r.messages.some((m) => m.content.includes(question))).length;
    // One slot for the wait on the probe, one per request the call itself sent.
    return 1 + sent;
  } finally {
    await fake.close();
  }
}

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

/** An LLM activity's start-to-close timeout (the first `activity`, default decompose) in a run
 * started as the CLI and API start one. */
async function scheduledTimeoutMs(
  s: TestStack,
  llm: { timeoutMs: number; maxReasks: number },
  activity = 'decompose',
  config: Partial<RunConfig> = {},
): Promise<number> {
  const id = await startFormalization(
    s.client,
    { statement: 'Every prime greater than 2 is odd.', library: FIXTURE_LIBRARY, leanTaskQueue: s.leanQueue, llm, config },
    s.mainQueue,
  );
  const handle = s.client.workflow.getHandle(id);
  const scheduled = await s.withWorkers(async () => {
    for (;;) {
      const events = (await handle.fetchHistory()).events ?? [];
      const found = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
      if (found) return found.activityTaskScheduledEventAttributes!;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  await handle.terminate('measured').catch(() => undefined);
  const t = scheduled.startToCloseTimeout!;
  return Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6);
}

describe('the LLM activity time budget', () => {
  it.each([
    ['the defaults', {}],
    ['a changed DRIFTLINE_LLM_TIMEOUT_MS', { DRIFTLINE_LLM_TIMEOUT_MS: '300000' }],
    ['a changed timeout and more re-asks', { DRIFTLINE_LLM_TIMEOUT_MS: '45000', DRIFTLINE_LLM_MAX_REASKS: '5' }],
  ])('fits one call with all its re-asks and fallbacks, for %s', async (_name, vars) => {
    const config = loadConfig({ env: vars, skipFileChecks: true, root: '/nonexistent' });
    const slots = await worstCaseSlots(config.llm.maxReasks);
    // The scenario reaches the worst case the budget allows for, no more.
    expect(slots).toBe(llmCallsPerActivity(config.llm));

    const s = await createStack(env, {});
    stacks.push(s);
    const scheduled = await scheduledTimeoutMs(s, { timeoutMs: config.llm.timeoutMs, maxReasks: config.llm.maxReasks });
    expect(scheduled).toBe(llmActivityTimeoutMs(config.llm));
    expect(scheduled).toBeGreaterThanOrEqual(slots * config.llm.timeoutMs);
  });

  it('gives an agent run the same budget: a slow provider is not cut off at a fixed few minutes', async () => {
    const s = await createStack(env, {});
    stacks.push(s);
    // A slow local model: 10 minutes per call.
    const slow = { timeoutMs: 600_000, maxReasks: 2 };
    for (const activity of ['decompose', 'agentStep']) {
      const scheduled = await scheduledTimeoutMs(s, slow, activity, { mode: 'agent', driftContext: true });
      expect(scheduled, activity).toBe(llmActivityTimeoutMs(slow));
    }
  });

  it('a run whose every LLM call is slow, refused twice and answered badly twice still completes without a stage being cut off', async () => {
    // 1 s per call (the smallest DRIFTLINE_LLM_TIMEOUT_MS), each answer taking most of it.
    const s = await createStack(env, { llm: { handler: worstServer(2, 700) }, llmSettings: { timeoutMs: 1000, maxReasks: 2 } });
    stacks.push(s);
    const id = await s.start('Every prime greater than 2 is odd.', { judge: false, illustrate: false });
    const result = await s.withWorkers(() => s.result(id));
    expect(result.subqueries.length).toBeGreaterThan(0);
    const events = (await s.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    expect(events.some((e) => e.activityTaskTimedOutEventAttributes)).toBe(false);
    expect(
      events.filter((e) => e.activityTaskStartedEventAttributes).every((e) => (e.activityTaskStartedEventAttributes!.attempt ?? 1) === 1),
    ).toBe(true);
  });
});
