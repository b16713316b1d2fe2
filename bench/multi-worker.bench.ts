// Lean-check throughput with one and with two Lean worker processes on the `lean` task queue:
// the same batch of runs (formalize + compile only; fake LLM answers at once, fake REPL takes
// BODY_MS per check, one REPL per worker) through a Temporal dev server, first with one Lean
// worker, then with a second one started beside it. Shows the queue spreading checks over the
// workers that poll it; the ratio is two workers' checks/s over one's, measured in the same run.
//
//   npx tsx bench/multi-worker.bench.ts [--json]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../infra/temporal-connection';
import { startFormalization } from '../client/runs';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE } from '../common/activities';
import type { RunConfig } from '../common/run-config-schema';
import type { FormalizeResult } from '../common/run-types';
import { startFakeOpenAI } from '../test/fakes/openai-server';
import { fakeRepl } from '../test/fakes/fake-repl-harness';
import { requireTemporalCli } from '../infra/temporal-cli';
import { startDevServer } from '../infra/temporal-server';
import { FIXTURE_LIBRARY } from '../test/helpers/stack';
import { freePort, prebuildIndex, spawnWorker, waitForWorkers, workerEnv, type WorkerProcess } from '../test/helpers/worker-processes';

const json = process.argv.includes('--json');
const RUNS = 20;
const BODY_MS = 1000;
// Only what reaches Lean: no retrieval, examples, repair or judge.
const CONFIG: Partial<RunConfig> = { retrieval: 'none', decompose: false, illustrate: false, repairRounds: 0, judge: false };

const dataDir = mkdtempSync(join(tmpdir(), 'driftline-bench-'));
// The dev server as `npm start` runs it (its output in a log file, so --json prints only JSON).
const namespace = 'default';
const server = await startDevServer({
  cli: requireTemporalCli(),
  port: await freePort(),
  uiPort: await freePort(),
  dbFile: join(dataDir, 'temporal.db'),
  namespace,
  logFile: join(dataDir, 'temporal.log'),
});
const connection = await connectTemporal({ address: server.address });
const client = new Client({ connection, namespace });
const llm = await startFakeOpenAI();
const repl = fakeRepl({ headerDelayMs: 200, bodyDelayMs: BODY_MS });
const workers: WorkerProcess[] = [];

interface Phase {
  leanWorkers: number;
  runs: number;
  seconds: number;
  checksPerSecond: number;
  /** Checks done by each Lean worker process, in start order. */
  checksPerWorker: number[];
}

async function batch(label: string, leanWorkers: WorkerProcess[], runs = RUNS): Promise<Phase> {
  const started = performance.now();
  const ids = await Promise.all(
    Array.from({ length: runs }, (_, i) =>
      startFormalization(client, {
        statement: `Statement ${i}: every prime greater than 2 is odd.`,
        library: FIXTURE_LIBRARY,
        config: CONFIG,
        id: `bench/${label}/${i}`,
      }),
    ),
  );
  const results = await Promise.all(ids.map((id) => client.workflow.getHandle(id).result() as Promise<FormalizeResult>));
  const seconds = (performance.now() - started) / 1000;
  if (results.some((r) => !r.compiled)) throw new Error('a benchmark statement did not compile');
  // Which worker ran each check: the identity on the compile's started event.
  const perWorker = leanWorkers.map(() => 0);
  for (const id of ids) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    for (const event of history.events ?? []) {
      const identity = event.activityTaskStartedEventAttributes?.identity;
      if (!identity) continue;
      const index = leanWorkers.findIndex((w) => identity.startsWith(w.identityPrefix));
      if (index >= 0) perWorker[index]!++;
    }
  }
  return {
    leanWorkers: leanWorkers.length,
    runs,
    seconds: round(seconds),
    checksPerSecond: round(runs / seconds),
    checksPerWorker: perWorker,
  };
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

try {
  const environment = workerEnv({
    temporalAddress: server.address,
    dataDir,
    llmUrl: llm.url,
    replCmd: repl.command,
    replSandboxEnv: repl.sandboxEnv,
    leanPoolSize: 1,
  });
  await prebuildIndex(environment);
  const main = await spawnWorker('main', environment);
  const lean1 = await spawnWorker('lean', environment);
  workers.push(main, lean1);
  await waitForWorkers(client, namespace, workers, { main: MAIN_TASK_QUEUE, lean: LEAN_TASK_QUEUE });
  // A first small batch warms the workflow cache and the REPL, so both phases start warm.
  await batch('warm-up', [lean1], 6);
  const one = await batch('one', [lean1]);

  const lean2 = await spawnWorker('lean', environment);
  workers.push(lean2);
  await waitForWorkers(client, namespace, workers, { main: MAIN_TASK_QUEUE, lean: LEAN_TASK_QUEUE });
  await batch('warm-up-2', [lean1, lean2], 6);
  const two = await batch('two', [lean1, lean2]);

  const ratio = round(two.checksPerSecond / one.checksPerSecond);
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ repl: { kind: 'fake', bodyMs: BODY_MS, poolSizePerWorker: 1 }, phases: [one, two], ratios: { twoOverOne: ratio } })}\n`,
    );
  } else {
    console.log(`fake REPL, ${BODY_MS} ms per check, one REPL per Lean worker; ${RUNS} runs per phase (formalize + compile)`);
    console.log('Lean workers | seconds | checks/s | checks per worker');
    console.log('-------------|---------|----------|------------------');
    for (const p of [one, two]) {
      console.log(
        `${String(p.leanWorkers).padStart(12)} | ${String(p.seconds).padStart(7)} | ${String(p.checksPerSecond).padStart(8)} | ${p.checksPerWorker.join(' / ')}`,
      );
    }
    console.log(`two workers / one: ${ratio}×`);
  }
} finally {
  await Promise.all(workers.map((w) => w.stop()));
  await llm.close();
  repl.cleanup();
  await connection.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
