// /readyz against the real Temporal dev server: a missing worker and a missing index are named,
// and 200 comes only when both workers poll and every library's index is built (reading
// readiness builds nothing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createReadinessCheck } from '../../api/readiness';
import { buildServer, type ReadinessReport } from '../../api/server';
import { createStack, FIXTURE_LIBRARY, startTemporal } from '../helpers/stack';
import { createLlmWorker, LLM_ACTIVITY_NAMES } from '../../infra/workers';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startTemporal();
});

afterAll(async () => {
  await env?.teardown();
});

describe('/readyz against the real dev server', () => {
  it('names a missing worker and a missing index, and answers 200 only when all are there', async () => {
    // Queues of their own, polled by nobody yet; an index registry with nothing built.
    const s = await createStack(env);
    const api = await buildServer({
      temporal: env.client,
      libraries: [FIXTURE_LIBRARY],
      defaultLibrary: FIXTURE_LIBRARY,
      maxStatementChars: 20_000,
      // Bundling workflows in this process stalls its event loop: no load shedding here.
      pressure: { maxEventLoopDelayMs: 0 },
      readiness: createReadinessCheck({
        client: env.client,
        namespace: env.namespace ?? 'default',
        unbuiltIndexes: () => s.indexes.unbuilt(),
        missing: [],
        mainQueue: s.mainQueue,
        leanQueue: s.leanQueue,
      }),
      taskQueue: s.mainQueue,
    });
    const readyz = async () => {
      const response = await api.inject({ url: '/readyz' });
      return { status: response.statusCode, body: response.json() as ReadinessReport };
    };
    try {
      const none = await readyz();
      expect(none.status).toBe(503);
      expect(none.body.checks.temporal).toEqual({ ok: true });
      expect(none.body.checks.mainWorker).toEqual({ ok: false, detail: `no worker polls the "${s.mainQueue}" task queue` });
      expect(none.body.checks.leanWorker).toEqual({ ok: false, detail: `no worker polls the "${s.leanQueue}" task queue` });
      expect(none.body.checks.index).toEqual({ ok: false, detail: `no premise index is built for "${FIXTURE_LIBRARY}"` });

      // The Lean worker alone: the main one is still missing.
      const [lean] = await s.createWorkers('lean');
      const leanRun = lean!.run();
      let main: Worker | undefined;
      let mainRun: Promise<void> | undefined;
      try {
        await until(async () => (await readyz()).body.checks.leanWorker?.ok === true);
        const leanOnly = await readyz();
        expect(leanOnly.status).toBe(503);
        expect(leanOnly.body.checks.mainWorker?.ok).toBe(false);

        // Both workers, no index yet: still not ready, and reading readiness builds nothing.
        [main] = await s.createWorkers('main');
        mainRun = main!.run();
        await until(async () => (await readyz()).body.checks.mainWorker?.ok === true);
        const noIndex = await readyz();
        expect(noIndex.status).toBe(503);
        expect(noIndex.body.checks.index?.ok).toBe(false);
        expect(await s.indexes.unbuilt()).toEqual([FIXTURE_LIBRARY]);

        await s.indexes.open(FIXTURE_LIBRARY); // builds and promotes the index
        const ready = await readyz();
        expect(ready.status).toBe(200);
        expect(ready.body).toMatchObject({ ready: true });
      } finally {
        lean!.shutdown();
        main?.shutdown();
        await Promise.all([leanRun, mainRun]);
      }
    } finally {
      await api.close();
      await s.close();
    }
  });
});

describe("/readyz and the LLM providers' queues", () => {
  it('names a provider queue nobody polls, and is content once an LLM worker polls it', async () => {
    const s = await createStack(env);
    const check = createReadinessCheck({
      client: env.client,
      namespace: env.namespace ?? 'default',
      unbuiltIndexes: () => [],
      missing: [],
      mainQueue: s.mainQueue,
      leanQueue: s.leanQueue,
      llmQueues: ['llm-readyz-a', 'llm-readyz-b'],
    });
    const workers = await s.createWorkers();
    const runs = workers.map((w) => w.run());
    let llm: Worker | undefined;
    let llmRun: Promise<void> | undefined;
    try {
      await until(async () => (await check()).checks.mainWorker?.ok === true && (await check()).checks.leanWorker?.ok === true);
      const none = await check();
      expect(none.ready).toBe(false);
      expect(none.checks.llmWorkers).toEqual({
        ok: false,
        detail: 'no worker polls the "llm-readyz-a" task queue; no worker polls the "llm-readyz-b" task queue',
      });
      llm = await createLlmWorker({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        activities: Object.fromEntries(LLM_ACTIVITY_NAMES.map((n) => [n, async () => undefined])) as never,
        provider: 'readyz-a',
        taskQueue: 'llm-readyz-a',
      });
      llmRun = llm.run();
      await until(async () => (await check()).checks.llmWorkers?.detail === 'no worker polls the "llm-readyz-b" task queue');
    } finally {
      for (const w of workers) w.shutdown();
      llm?.shutdown();
      await Promise.all([...runs, llmRun]);
      await s.close();
    }
  });
});

async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}
