// The premise store goes away mid-sweep and comes back: every run completes, none fails, each
// is recorded once. The store is the embedded one, made to fail for a few seconds through the
// registry's own store object (every call rejects as a client's would while Qdrant restarts),
// so the failure enters at `openIndex` and the searches. A failure misfiled as a caller's
// mistake (UnknownLibrary, not retried) would fail the runs that searched during the outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { SweepProgress } from '../../common/sweep';
import type { IndexStore } from '../../engines/retrieval/stores/store';
import { activityRuns } from '../helpers/history';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { miniSpec, progressOf, startOnStack, waitFor } from '../helpers/sweep';

let env: TestWorkflowEnvironment;
let stack: TestStack;

/** The store calls a search makes; each rejects while `down`. */
const READS = ['getAlias', 'getVersion', 'search', 'get', 'theoremsUsing', 'theoremUses', 'count'] as const;

function makeFlaky(store: IndexStore): { outage: { down: boolean; refused: number } } {
  const outage = { down: false, refused: 0 };
  for (const name of READS) {
    const real = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
    Object.assign(store, {
      [name]: (...args: unknown[]) => {
        if (!outage.down) return real(...args);
        outage.refused++;
        return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6333 (the premise store is down)'));
      },
    });
  }
  return { outage };
}

beforeAll(async () => {
  env = await startTemporal();
  stack = await createStack(env, { repl: { typeMismatchPatterns: ['Even \\(2 \\* n\\)'] } });
  // Built before the sweep, so the outage meets searches, not the first build.
  await stack.indexes.open('mini');
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

describe('a premise store outage mid-sweep', () => {
  it('is ridden out by the retry policy: every run completes, none failed, each recorded once', async () => {
    const { outage } = makeFlaky(stack.indexes.store);
    const id = 'sw-store-outage';
    // One attempt per unit: a run failed by the outage would stay failed.
    const spec = miniSpec({ maxAttempts: 1, window: 4, configurations: [{ name: 'drift', config: { judge: false } }] });
    await startOnStack(stack, spec, { id });
    const final = await stack.withWorkers(async () => {
      await waitFor('the first recorded run', async () => (await progressOf(stack, id)).done >= 1);
      outage.down = true;
      await waitFor('searches refused by the store', async () => outage.refused >= 3, 30_000);
      await new Promise((r) => setTimeout(r, 3000));
      outage.down = false;
      return (await stack.client.workflow.getHandle(id).result()) as SweepProgress;
    });

    expect(outage.refused).toBeGreaterThanOrEqual(3);
    expect(final).toMatchObject({ status: 'completed', total: 8, done: 8, failed: 0, retries: 0 });
    const records = await stack.results.runs(id);
    expect(records).toHaveLength(8);
    expect(new Set(records.map((r) => r.workflowId)).size).toBe(8);
    expect(records.filter((r) => r.outcome === 'failed')).toEqual([]);
    // The runs that met the outage retried their search until the store was back.
    let retried = 0;
    for (const r of records) {
      const runs = await activityRuns(stack.client, r.workflowId);
      retried += runs.filter((a) => (a.type === 'retrieve' || a.type === 'illustrate') && (a.attempt ?? 0) > 1).length;
    }
    expect(retried).toBeGreaterThan(0);
  }, 240_000);
});
