// The sweep workflow on the real Temporal dev server with the real workers, a fake LLM and a
// fake Lean REPL: every unit recorded exactly once, failures retried and recorded, pause,
// resume and cancel, and continueAsNew with the window still full.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { CONFIG_KEY, SWEEP_KEY } from '../../common/search-attributes';
import { configRate, type SweepInput, type SweepProgress } from '../../common/sweep';
import { signalSweep } from '../../client/sweeps';
import { createStack, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { defaultBrain, FAKE_MODELS, type FakeHandler } from '../fakes/openai-server';
import { MINI_BENCHMARK, miniSpec, progressOf, startOnStack, waitFor } from '../helpers/sweep';

let env: TestWorkflowEnvironment;
const stacks: TestStack[] = [];

// "even" items never compile (the fake Lean reports a type mismatch on `Even (2 * n)`), so the
// sweep sees both outcomes.
const REPL = { typeMismatchPatterns: ['Even \\(2 \\* n\\)'] };

async function stack(options: Parameters<typeof createStack>[1] = {}): Promise<TestStack> {
  const s = await createStack(env, { repl: REPL, ...options });
  stacks.push(s);
  return s;
}

/** Runs the stack's workers until the sweep's workflow result is in. */
async function runToEnd(s: TestStack, id: string): Promise<SweepProgress> {
  return s.withWorkers(() => s.client.workflow.getHandle(id).result() as Promise<SweepProgress>);
}

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  for (const s of stacks) await s.close();
  await env?.teardown();
});

describe('sweep workflow', () => {
  it('runs every (configuration, item, sample) once as a tagged child and records it once', async () => {
    const s = await stack();
    const started = await startOnStack(s, miniSpec({ samples: 2, window: 3 }), { id: 'sw-basic' });
    expect(started).toMatchObject({ id: 'sw-basic', existing: false, total: 32 });
    const final = await runToEnd(s, 'sw-basic');

    expect(final).toMatchObject({ status: 'completed', total: 32, done: 32, failed: 0, running: 0 });
    expect(final.perConfig.drift).toMatchObject({ total: 16, done: 16, failed: 0 });
    // The rate is finished runs over the sweep's time, counted once (common/sweep-rate.ts): against
    // the time from its first task (startedAt: the workers start after the workflow does) to
    // Temporal's close time; the configurations' rates add up to it.
    const closed = await s.client.workflow.getHandle('sw-basic').describe();
    const seconds = (closed.closeTime!.getTime() - Date.parse(final.startedAt)) / 1000;
    expect((final.rate * seconds) / final.done).toBeGreaterThan(0.8);
    expect((final.rate * seconds) / final.done).toBeLessThan(1.25);
    const perConfigRates = Object.values(final.perConfig).map((c) => configRate(final, c).rate);
    expect(perConfigRates.reduce((a, b) => a + b, 0)).toBeCloseTo(final.rate, 9);
    const runs = await s.results.runs('sw-basic');
    expect(runs).toHaveLength(32);
    expect(new Set(runs.map((r) => r.workflowId)).size).toBe(32);
    const prime = runs.find((r) => r.config === 'drift' && r.item === 'Demo.prime_ge_two' && r.sample === 1)!;
    expect(prime).toMatchObject({
      workflowId: 'sw-basic/drift/Demo.prime_ge_two/1',
      outcome: 'faithful',
      compiled: true,
      checked: true,
      judgeGrade: 10,
      goldPremises: ['Nat.Prime'],
    });
    expect(prime.tags).toEqual({ split: 'dev', source: 'Demo' });
    expect(prime.premises).toContain('Nat.Prime');
    expect(prime.stageMs.formalize).toBeGreaterThanOrEqual(0);
    expect(prime.attempts).toEqual([{ round: 0, compiled: true, status: 'ok' }]);
    const even = runs.find((r) => r.config === 'drift' && r.item === 'Demo.even_double' && r.sample === 0)!;
    // The fake formalizer repeats its wrong statement, so the second repair would send the first
    // one's prompt again: the loop ends there, after one repair.
    expect(even).toMatchObject({ outcome: 'not-compiled', compiled: false, repairRounds: 1 });
    expect(even.attempts.map((a) => a.compiled)).toEqual([false, false]);
    const bare = runs.find((r) => r.config === 'no-retrieval' && r.item === 'Demo.even_double' && r.sample === 0)!;
    expect(bare).toMatchObject({ premises: [], repairRounds: 0 });

    // Children carry the sweep (and their configuration) as search attributes.
    const child = await s.client.workflow.getHandle('sw-basic/no-retrieval/Demo.prime_odd/0').describe();
    expect(child.typedSearchAttributes.get(SWEEP_KEY)).toBe('sw-basic');
    expect(child.typedSearchAttributes.get(CONFIG_KEY)).toBe('no-retrieval');
    // Starting the same ID again answers with the existing sweep and starts nothing.
    const again = await startOnStack(s, miniSpec({ samples: 2, window: 3 }), { id: 'sw-basic' });
    expect(again).toMatchObject({ id: 'sw-basic', existing: true, total: 32 });
    expect(await s.results.runs('sw-basic')).toHaveLength(32);
  }, 180_000);

  it('replays deterministically: with no workflow cache every task replays the whole history, and the sweep still completes', async () => {
    // A sweep (and its children) whose commands depended on timing would fail a replay here
    // with a nondeterminism error and never finish; window 6 keeps every child and its
    // record in flight at once. (It did not catch the local record activity that failed a
    // 10,000-run sweep's replay at an item-page boundary: that needs > 100 items.)
    const s = await stack({ maxCachedWorkflows: 0 });
    // Four items × 2 configurations: every task replays the history from its start, so the cost
    // grows with the square of the sweep's length.
    await startOnStack(
      s,
      miniSpec({ benchmarks: [{ path: MINI_BENCHMARK, format: 'rautoformalizer', limit: 4 }], samples: 1, window: 6 }),
      { id: 'sw-replay' },
    );
    const final = await runToEnd(s, 'sw-replay');
    expect(final).toMatchObject({ status: 'completed', total: 8, done: 8, failed: 0 });
    const runs = await s.results.runs('sw-replay');
    expect(new Set(runs.map((r) => r.workflowId)).size).toBe(8);
  }, 180_000);

  it('records a failing child with its reason after retrying it, and retries one that fails once', async () => {
    let flaky = 0;
    const handler: FakeHandler = (req) => {
      const text = req.messages.map((m) => m.content).join('\n');
      if (req.model === FAKE_MODELS.formalizer && text.includes('identity is unique')) {
        return { status: 400, message: 'this statement is refused by the provider' };
      }
      if (req.model === FAKE_MODELS.formalizer && text.includes('real number is nonnegative') && flaky++ === 0) {
        return { status: 400, message: 'refused once' };
      }
      return defaultBrain(req);
    };
    const s = await stack({ llm: { handler } });
    await startOnStack(
      s,
      miniSpec({ configurations: [{ name: 'mono', config: { retrieval: 'monolithic', judge: false } }], maxAttempts: 2 }),
      { id: 'sw-fail' },
    );
    const final = await runToEnd(s, 'sw-fail');

    expect(final).toMatchObject({ status: 'completed', total: 8, done: 8, failed: 1, retries: 2 });
    const runs = await s.results.runs('sw-fail');
    expect(runs).toHaveLength(8);
    const failed = runs.find((r) => r.item === 'Demo.group_one')!;
    expect(failed.outcome).toBe('failed');
    expect(failed.error).toMatch(/refused by the provider/);
    expect(runs.find((r) => r.item === 'Demo.square_nonneg')!.outcome).toBe('compiled');
    const failures = await s.results.failures('sw-fail');
    expect(failures.map((f) => [f.workflowId, f.attempt])).toEqual([
      ['sw-fail/mono/Demo.group_one/0', 1],
      ['sw-fail/mono/Demo.group_one/0', 2],
      ['sw-fail/mono/Demo.square_nonneg/0', 1],
    ]);
  }, 180_000);

  it('continues as new with children in flight, and progress, pause and resume stay right across it', async () => {
    // Slow formalizer calls keep the window full whenever the sweep continues as new.
    const handler: FakeHandler = async (req) => {
      await new Promise((r) => setTimeout(r, req.model === FAKE_MODELS.formalizer ? 150 : 0));
      return defaultBrain(req);
    };
    const s = await stack({ llm: { handler } });
    const spec = miniSpec({ window: 3, samples: 2 });
    await startOnStack(s, spec, { id: 'sw-can', historyLimit: 60 });
    const handle = s.client.workflow.getHandle('sw-can');
    const workers = await s.createWorkers();
    const running = workers.map((w) => w.run());
    try {
      // Pause once the sweep has continued as new at least once.
      await waitFor('a continueAsNew', async () => (await progressOf(s, 'sw-can')).generation >= 1, 120_000);
      await signalSweep(s.client, 'sw-can', 'pause');
      const paused = await waitFor('the window to drain', async () => {
        const p = await progressOf(s, 'sw-can');
        return p.status === 'paused' && p.running === 0 ? p : undefined;
      });
      expect(paused.done).toBeLessThan(32);
      // Counters carried across continueAsNew match the database exactly.
      expect(await s.results.runs('sw-can')).toHaveLength(paused.done);
      await new Promise((r) => setTimeout(r, 1500));
      const still = await progressOf(s, 'sw-can');
      expect(still).toMatchObject({ status: 'paused', done: paused.done, running: 0 });

      await signalSweep(s.client, 'sw-can', 'resume');
      await waitFor('the sweep to run again', async () => (await progressOf(s, 'sw-can')).done > paused.done);
      const final = (await handle.result()) as SweepProgress;
      expect(final).toMatchObject({ status: 'completed', total: 32, done: 32, failed: 0 });
      expect(final.generation).toBeGreaterThanOrEqual(2);
      expect(final.perConfig['no-retrieval']).toMatchObject({ total: 16, done: 16 });
    } finally {
      for (const w of workers) w.shutdown();
      await Promise.all(running);
    }
    const runs = await s.results.runs('sw-can');
    expect(runs).toHaveLength(32);
    expect(new Set(runs.map((r) => `${r.config}/${r.item}/${r.sample}`)).size).toBe(32);
    // Every child ran exactly once: one run per workflow ID in Temporal's visibility.
    const children: string[] = [];
    for await (const wf of s.client.workflow.list({ query: `DriftlineSweep = 'sw-can' AND WorkflowType = 'formalize'` }))
      children.push(wf.workflowId);
    expect(children.sort()).toEqual(runs.map((r) => r.workflowId).sort());
    // The parent really continued as new: several runs under the one sweep ID.
    const parents: string[] = [];
    for await (const wf of s.client.workflow.list({ query: `WorkflowId = 'sw-can'` })) parents.push(wf.runId);
    expect(parents.length).toBeGreaterThanOrEqual(3);
    // …and carried children still in flight into the next run, which awaited them.
    let carried = 0;
    for (const runId of parents) {
      const history = await s.client.workflow.getHandle('sw-can', runId).fetchHistory();
      for (const e of history.events ?? []) {
        const payload = e.workflowExecutionContinuedAsNewEventAttributes?.input?.payloads?.[0]?.data;
        if (payload) carried += (JSON.parse(Buffer.from(payload).toString('utf8')) as SweepInput).cursor!.inflight.length;
      }
    }
    expect(carried).toBeGreaterThan(0);
  }, 240_000);

  it('re-uses finished identical cells of an earlier sweep with --reuse, and runs only the rest', async () => {
    const s = await stack();
    const base = miniSpec();
    const three = { ...base, benchmarks: [{ ...base.benchmarks[0]!, limit: 3 }] };
    await startOnStack(s, three, { id: 'sw-r1' });
    await runToEnd(s, 'sw-r1');
    const next = {
      ...three,
      configurations: [
        { name: 'drift', config: {} },
        { name: 'judge-off', config: { judge: false } },
      ],
    };
    const started = await startOnStack(s, next, { id: 'sw-r2', reuse: 'sw-r1' });
    expect(started.reused).toEqual(['drift']);
    const final = await runToEnd(s, 'sw-r2');
    expect(final).toMatchObject({ status: 'completed', total: 6, done: 6, failed: 0 });
    const runs = await s.results.runs('sw-r2');
    expect(runs).toHaveLength(6);
    expect(runs.filter((r) => r.config === 'drift').map((r) => r.reusedFrom)).toEqual([
      'sw-r1/drift/Demo.even_double/0',
      'sw-r1/drift/Demo.prime_ge_two/0',
      'sw-r1/drift/Demo.prime_odd/0',
    ]);
    // Only the new cell ran as children of this sweep.
    const children: string[] = [];
    for await (const wf of s.client.workflow.list({ query: `DriftlineSweep = 'sw-r2' AND WorkflowType = 'formalize'` }))
      children.push(wf.workflowId);
    expect(children.sort()).toEqual(
      ['sw-r2/judge-off/Demo.even_double/0', 'sw-r2/judge-off/Demo.prime_ge_two/0', 'sw-r2/judge-off/Demo.prime_odd/0'].sort(),
    );
  }, 180_000);

  it('pins the index version: children search the pinned version, and a missing one fails them, named', async () => {
    const s = await stack();
    const { version } = await s.indexes.open(FIXTURE_LIBRARY);
    const spec = miniSpec({ configurations: [{ name: 'mono', config: { retrieval: 'monolithic', judge: false } }], maxAttempts: 1 });
    const started = await startOnStack(
      s,
      { ...spec, benchmarks: [{ ...spec.benchmarks[0]!, limit: 2 }] },
      { id: 'sw-pin', currentIndexVersion: version },
    );
    expect(await s.results.getSweep('sw-pin')).toMatchObject({ indexVersion: version });
    const final = await runToEnd(s, started.id);
    expect(final).toMatchObject({ done: 2, failed: 0 });
    expect((await s.results.runs('sw-pin'))[0]!.premises.length).toBeGreaterThan(0);

    const gone = await startOnStack(s, {
      ...spec,
      id: 'sw-gone',
      indexVersion: 'mini-000000000000-lexical-s1t1',
      benchmarks: [{ ...spec.benchmarks[0]!, limit: 1 }],
    });
    expect(await runToEnd(s, gone.id)).toMatchObject({ done: 1, failed: 1 });
    expect((await s.results.runs('sw-gone'))[0]!.error).toMatch(/mini-000000000000-lexical-s1t1/);
    // The hash of a cell moves with the index version it was run on.
    expect(gone.cells[0]!.hash).not.toBe(started.cells[0]!.hash);
  }, 180_000);

  it('cancels: no new children start, running ones are cancelled, the status says cancelled', async () => {
    const handler: FakeHandler = async (req) => {
      await new Promise((r) => setTimeout(r, req.model === FAKE_MODELS.formalizer ? 400 : 0));
      return defaultBrain(req);
    };
    const s = await stack({ llm: { handler } });
    await startOnStack(s, miniSpec({ window: 2 }), { id: 'sw-cancel' });
    const final = await s.withWorkers(async () => {
      await waitFor('two runs done', async () => (await progressOf(s, 'sw-cancel')).done >= 2);
      await signalSweep(s.client, 'sw-cancel', 'cancel');
      return (await s.client.workflow.getHandle('sw-cancel').result()) as SweepProgress;
    });
    expect(final.status).toBe('cancelled');
    expect(final.done).toBeLessThan(16);
    expect(await progressOf(s, 'sw-cancel')).toMatchObject({ status: 'cancelled' });
    expect(await s.results.runs('sw-cancel')).toHaveLength(final.done);
  }, 180_000);
});
