// Whole runs against a server that behaves like llama-cpp-python's (refuses json_schema with a
// 500, never stops a base model, drops system messages): each ends as it should, in seconds,
// with a failure message that names the stage, the model, the endpoint and the reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { getFormalization } from '../../client/runs';
import { createStack, startTemporal, type StackOptions, type TestStack } from '../helpers/stack';
import { FAKE_MODELS } from '../fakes/openai-server';

const STATEMENT = 'If p is a prime number then p is at least 2.';

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

async function stack(options: StackOptions): Promise<TestStack> {
  const s = await createStack(env, { repl: { unknownIdentifiers: [] }, ...options });
  stacks.push(s);
  return s;
}

/** Attempts of each activity, from the run's history (1 everywhere: nothing was retried). */
async function attempts(s: TestStack, id: string): Promise<Record<string, number>> {
  const events = (await s.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const typeById = new Map<string, string>();
  const out: Record<string, number> = {};
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) typeById.set(String(e.eventId), scheduled.activityType?.name ?? '');
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const type = typeById.get(String(started.scheduledEventId)) ?? '?';
      out[type] = Math.max(out[type] ?? 0, started.attempt ?? 1);
    }
  }
  return out;
}

/** Runs to the end (completed or failed) and returns the API's view of it. */
async function runToEnd(s: TestStack, id: string) {
  await s.withWorkers(() => s.result(id).catch(() => undefined));
  return (await getFormalization(s.client, id))!;
}

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

describe('a llama-cpp-python-like server', () => {
  it('completes with json_object found by the start probe and the system prompt folded in', async () => {
    const s = await stack({ llm: { llamaCpp: { refuseJsonSchema: true, dropSystem: true } }, llmSettings: { foldSystemPrompt: true } });
    const status = await s.llmClient.probe();
    expect(status).toMatchObject({ structuredOutput: 'json_object', source: 'probe', foldSystemPrompt: true });
    const probes = s.llm.requests.length;

    const started = Date.now();
    const id = await s.start(STATEMENT);
    const view = await runToEnd(s, id);
    expect(view.status).toBe('completed');
    expect(view.result!.outcome).toBe('faithful');
    expect(Date.now() - started).toBeLessThan(30_000);

    const run = s.llm.requests.slice(probes);
    expect(run.filter((r) => r.response_format).map((r) => r.response_format!.type)).toEqual(['json_object', 'json_object']);
    for (const r of run) {
      expect(r.messages.some((m) => m.role === 'system')).toBe(false);
      expect(typeof r.body.max_tokens).toBe('number');
    }
    expect(Object.values(await attempts(s, id)).every((n) => n === 1)).toBe(true);
  });

  it('without a probe, the refused json_schema falls back at once: no stage is retried by Temporal', async () => {
    const s = await stack({ llm: { llamaCpp: { refuseJsonSchema: true } } });
    const id = await s.start(STATEMENT);
    const view = await runToEnd(s, id);
    expect(view.status).toBe('completed');
    const decomposer = s.llm.requests.filter((r) => r.model === FAKE_MODELS.decomposer).map((r) => r.response_format?.type);
    const judge = s.llm.requests.filter((r) => r.model === FAKE_MODELS.judge).map((r) => r.response_format?.type);
    expect(decomposer).toEqual(['json_schema', 'json_object']);
    expect(judge).toEqual(['json_object']);
    expect(await attempts(s, id)).toMatchObject({ decompose: 1, judge: 1 });
  });

  it('a base model that never stops: the run fails at formalize in seconds, saying where and why', async () => {
    const s = await stack({ llm: { llamaCpp: { refuseJsonSchema: true, neverStops: true } } });
    const started = Date.now();
    const id = await s.start(STATEMENT);
    const view = await runToEnd(s, id);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(view.status).toBe('failed');
    expect(view.failure).toMatchObject({ stage: 'formalize', type: 'LlmTruncated' });
    expect(view.error).toContain('stage formalize failed');
    expect(view.error).toContain(`model "${FAKE_MODELS.formalizer}"`);
    expect(view.error).toContain(s.llm.url);
    expect(view.error).toContain('max_tokens=4096');
    expect(view.error).toContain('finish_reason "length"');
    // Once with the role's limit, once with twice that; never retried by Temporal.
    expect(s.llm.requests.filter((r) => r.model === FAKE_MODELS.formalizer).map((r) => r.body.max_tokens)).toEqual([2048, 4096]);
    expect(await attempts(s, id)).toMatchObject({ formalize: 1 });
  });

  it('system messages dropped and not folded: the decomposer never sees its instructions, and the failure says so plainly', async () => {
    const s = await stack({ llm: { llamaCpp: { refuseJsonSchema: true, dropSystem: true } } });
    const id = await s.start(STATEMENT);
    const view = await runToEnd(s, id);
    expect(view.status).toBe('failed');
    expect(view.failure).toMatchObject({ stage: 'decompose', type: 'LlmBadReply' });
    expect(view.error).toContain(`model "${FAKE_MODELS.decomposer}" at ${s.llm.url}`);
    expect(view.error).toContain('gave no usable reply after 3 tries');
  });
});
