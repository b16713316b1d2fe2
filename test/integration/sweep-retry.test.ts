// `driftline sweep retry` as a user runs it (the real CLI process) against the real Temporal dev
// server, with workers and fakes in this process. The fake LLM refuses two items' statements, so
// their children fail on every attempt the sweep allows and are recorded `failed`; after that the
// fake is healed (or not) and the sweep is retried. Counted at the fake and in Temporal: only the
// failed units run again; each unit keeps one record, the retried ones replacing the failed.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { SweepProgress } from '../../common/sweep';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { miniSpec, progressOf, startOnStack, waitFor } from '../helpers/sweep';
import { defaultBrain, FAKE_MODELS, type FakeHandler } from '../fakes/openai-server';
import { signalSweep } from '../../client/sweeps';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));

// The mini benchmark's items, by a phrase of their informal statement (every LLM prompt has it).
const PHRASES: Record<string, string> = {
  'Demo.prime_ge_two': 'at least 2',
  'Demo.even_double': 'Twice any natural number',
  'Demo.prime_odd': 'other than two is odd',
  'Demo.divides_refl': 'divides itself',
  'Demo.group_one': 'identity is unique',
  'Demo.square_nonneg': 'real number is nonnegative',
  'Demo.prime_pos': 'A prime number is positive',
  'Demo.even_sum': 'sum of two even numbers',
};
const BROKEN = ['Demo.group_one', 'Demo.square_nonneg'];

let env: TestWorkflowEnvironment;
let stack: TestStack;
let broken = true;
let slowMs = 0;
const requests = new Map<string, number>();

// Counts every LLM request per item; while `broken`, the provider refuses the broken items.
const handler: FakeHandler = async (req) => {
  const text = req.messages.map((m) => m.content).join('\n');
  // The item's own statement comes last (examples of other items may come before it).
  let item: string | undefined;
  let at = -1;
  for (const [id, phrase] of Object.entries(PHRASES)) {
    const i = text.lastIndexOf(phrase);
    if (i > at) [item, at] = [id, i];
  }
  if (item) requests.set(item, (requests.get(item) ?? 0) + 1);
  if (broken && item && BROKEN.includes(item) && req.model === FAKE_MODELS.formalizer)
    return { status: 400, message: 'this statement is refused by the provider' };
  if (slowMs && req.model === FAKE_MODELS.formalizer) await new Promise((r) => setTimeout(r, slowMs));
  return defaultBrain(req);
};

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        DRIFTLINE_DATA_DIR: stack.dataDir,
        DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Executions per child workflow ID of the sweep, from Temporal's visibility. */
async function childRuns(id: string): Promise<Map<string, number>> {
  const runs = new Map<string, number>();
  for await (const wf of stack.client.workflow.list({ query: `DriftlineSweep = '${id}' AND WorkflowType = 'formalize'` }))
    runs.set(wf.workflowId, (runs.get(wf.workflowId) ?? 0) + 1);
  return runs;
}

const result = (id: string) => stack.client.workflow.getHandle(id).result() as Promise<SweepProgress>;

beforeAll(async () => {
  env = await startTemporal();
  stack = await createStack(env, { llm: { handler } });
});

afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

describe('driftline sweep retry', () => {
  it('starts only the failed units again, each keeping one record; says how many; refuses a running or unknown sweep', async () => {
    const id = 'sw-retry';
    const spec = miniSpec({
      configurations: [
        { name: 'mono', config: { retrieval: 'monolithic', judge: false } },
        { name: 'bare', config: { retrieval: 'none', repairRounds: 0, judge: false } },
      ],
      maxAttempts: 2,
      window: 4,
    });
    await startOnStack(stack, spec, { id });

    // Still running (no worker has picked it up yet): refused, and nothing is started.
    const early = await cli('sweep', 'retry', id);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/sweep sw-retry is still running; retry it once it has ended/);
    const unknown = await cli('sweep', 'retry', 'no-such-sweep');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no sweep "no-such-sweep"/);

    const first = await stack.withWorkers(() => result(id));
    expect(first).toMatchObject({ status: 'completed', total: 16, done: 16, failed: 4, retries: 4 });
    expect(first.retried).toBeUndefined();
    const failedIds = (await stack.results.runs(id)).filter((r) => r.outcome === 'failed').map((r) => r.workflowId);
    expect(failedIds.sort()).toEqual(['mono', 'bare'].flatMap((c) => BROKEN.map((item) => `${id}/${c}/${item}/0`)).sort());

    // Round 1, the provider still refusing: the same four units run again (two attempts each)
    // and fail again; their failed records are replaced (still one per unit), attempts go on.
    requests.clear();
    const round1 = await cli('sweep', 'retry', id);
    expect(round1.code, round1.stderr).toBe(0);
    expect(round1.stdout).toMatch(/sweep sw-retry: retry 1 started: 4 failed runs of 16 started again \(bare 2, mono 2\)/);
    const again = await stack.withWorkers(() => result(id));
    expect(again).toMatchObject({ status: 'completed', total: 16, done: 16, failed: 4, retried: 4 });
    expect(again.perConfig.mono).toMatchObject({ done: 8, failed: 2, retried: 2 });
    expect([...requests.keys()].sort()).toEqual([...BROKEN].sort());
    let runs = await stack.results.runs(id);
    expect(runs).toHaveLength(16);
    for (const r of runs) expect(r.retryRound).toBe(failedIds.includes(r.workflowId) ? 1 : undefined);
    const attempts = (await stack.results.failures(id)).filter((f) => f.workflowId === failedIds[0]).map((f) => f.attempt);
    expect(attempts).toEqual([1, 2, 3, 4]);

    // Round 2, healed, with a small history limit (the round continues as new with units in
    // flight) and the workers stopped and started again while it runs.
    broken = false;
    slowMs = 300;
    requests.clear();
    const parentRuns = async () => {
      let n = 0;
      for await (const _ of stack.client.workflow.list({ query: `WorkflowId = '${id}'` })) n++;
      return n;
    };
    const round2 = await cli('sweep', 'retry', id, '--json', '--history-limit', '25');
    expect(round2.code, round2.stderr).toBe(0);
    expect(JSON.parse(round2.stdout)).toEqual({ id, round: 2, retried: 4, perConfig: { bare: 2, mono: 2 }, total: 16 });
    // `status` says it while the retry runs: a unit stays failed until its new record replaces
    // the failed one.
    const running = JSON.parse((await cli('sweep', 'status', id, '--json')).stdout) as SweepProgress;
    expect(running).toMatchObject({ status: 'running', total: 16, done: 16, failed: 4, retried: 4 });
    let workers = await stack.createWorkers();
    let polling = workers.map((w) => w.run());
    await waitFor('a retried unit recorded', async () => (await stack.results.runs(id)).some((r) => r.retryRound === 2), 120_000);
    for (const w of workers) w.shutdown();
    await Promise.all(polling);
    workers = await stack.createWorkers();
    polling = workers.map((w) => w.run());
    let final: SweepProgress;
    try {
      final = await result(id);
    } finally {
      for (const w of workers) w.shutdown();
      await Promise.all(polling);
    }
    expect(final).toMatchObject({ status: 'completed', total: 16, done: 16, failed: 0, retried: 4 });
    expect(final.perConfig.bare).toMatchObject({ total: 8, done: 8, failed: 0, retried: 2 });
    expect(final.generation).toBeGreaterThanOrEqual(1);
    // Only the broken items reached the LLM again: once per unit (monolithic, no judge, compiles).
    expect(Object.fromEntries(requests)).toEqual(Object.fromEntries(BROKEN.map((item) => [item, 2])));
    runs = await stack.results.runs(id);
    expect(runs).toHaveLength(16);
    expect(new Set(runs.map((r) => r.workflowId)).size).toBe(16);
    for (const r of runs) {
      if (failedIds.includes(r.workflowId)) expect(r).toMatchObject({ retryRound: 2, outcome: 'compiled', compiled: true });
      else expect(r.retryRound).toBeUndefined();
      expect(r.outcome).not.toBe('failed');
    }
    // In Temporal: each failed unit's child ran 2 + 2 + 1 times under its one ID, the rest once.
    await waitFor('visibility to catch up', async () => {
      const children = await childRuns(id);
      return children.size === 16 && [...children].every(([wf, n]) => n === (failedIds.includes(wf) ? 5 : 1));
    });

    // The contract's rows, one per unit; the report and `status` say how many were retried.
    const rows = (await cli('sweep', 'export', id, '--format', 'jsonl')).stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(16);
    for (const row of rows) expect(Object.keys(row)).toEqual(expect.arrayContaining(['config', 'item', 'sample', 'outcome', 'compiled']));
    const status = await cli('sweep', 'status', id);
    expect(status.stdout).toMatch(/sweep sw-retry: completed, 16\/16 runs done, 0 failed, 4 retried/);
    expect(status.stdout).toMatch(/ {2}mono: 8\/8 done, 0 failed, 2 retried/);
    const out = mkdtempSync(join(tmpdir(), 'driftline-retry-report-'));
    const report = await cli('sweep', 'report', id, '--out', out);
    expect(report.code, report.stderr).toBe(0);
    const markdown = readFileSync(join(out, 'report.md'), 'utf8');
    expect(markdown).toMatch(/\| configuration \| items \| runs \| failed \| retried \|/);
    expect(markdown).toMatch(/\| mono \| 8 \| 8 \| 0 \| 2 \|/);
    expect(markdown).toContain('started again by `driftline sweep retry` (their records replace the failed ones): bare 2, mono 2.');
    rmSync(out, { recursive: true, force: true });

    // Nothing failed now: a retry says so and starts nothing.
    const before = await parentRuns();
    const nothing = await cli('sweep', 'retry', id);
    expect(nothing.code, nothing.stderr).toBe(0);
    expect(nothing.stdout).toMatch(/sweep sw-retry: no failed runs; nothing to retry, nothing started/);
    expect(await parentRuns()).toBe(before);
    expect(await progressOf(stack, id)).toMatchObject({ status: 'completed', done: 16, failed: 0, retried: 4 });
  }, 600_000);

  it('retries the failed runs of a cancelled sweep, leaves the runs it never started unrun, and stays cancelled', async () => {
    const id = 'sw-retry-cancelled';
    broken = true;
    slowMs = 0;
    const spec = miniSpec({
      // Items 5–8 of the mini benchmark: the two broken ones first, then two healthy ones.
      benchmarks: [{ ...miniSpec().benchmarks[0]!, offset: 4 }],
      configurations: [{ name: 'mono', config: { retrieval: 'monolithic', judge: false } }],
      maxAttempts: 1,
      window: 1,
    });
    await startOnStack(stack, spec, { id });
    const cancelled = await stack.withWorkers(async () => {
      await waitFor('the broken units recorded', async () => (await progressOf(stack, id)).failed >= 2, 120_000);
      // The next unit is slow: the sweep is cancelled while it runs.
      slowMs = 5000;
      await signalSweep(stack.client, id, 'cancel');
      return result(id);
    });
    expect(cancelled).toMatchObject({ status: 'cancelled', total: 4, done: 2, failed: 2 });

    broken = false;
    slowMs = 0;
    requests.clear();
    const retry = await cli('sweep', 'retry', id);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toMatch(/retry 1 started: 2 failed runs of 4 started again \(mono 2\)/);
    const final = await stack.withWorkers(() => result(id));
    expect(final).toMatchObject({ status: 'cancelled', total: 4, done: 2, failed: 0, retried: 2 });
    expect([...requests.keys()].sort()).toEqual([...BROKEN].sort());
    const runs = await stack.results.runs(id);
    expect(runs.map((r) => [r.item, r.outcome, r.retryRound])).toEqual([
      ['Demo.group_one', 'compiled', 1],
      ['Demo.square_nonneg', 'compiled', 1],
    ]);
  }, 300_000);
});
