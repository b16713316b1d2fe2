// Durability of batch mode: a sweep of 100 items × 2 configurations whose LLM calls go in provider
// batches (the fake's Batch API, with a delay so that batches are in flight for a while). While
// batches are at the provider, the main worker is killed with SIGKILL twice and the Temporal dev
// server once; each comes back. Every run completes once, the provider saw each custom_id
// submitted once (no request paid twice), and the records equal those of the same sweep run
// synchronously afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, type Connection } from '@temporalio/client';
import { connectTemporal } from '../../infra/temporal-connection';
import type { SweepProgress, SweepRunRecord } from '../../common/sweep';
import { batchEnded, type ProviderBatchStatus } from '../../common/llm-batch';
import { startSweep } from '../../client/sweeps';
import { ResultsDb, resultsLocation } from '../../engines/results/results-db';
import { sweepBatchCounts } from '../../engines/results/llm-batches';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import { startDevServer, type DevServer } from '../../infra/temporal-server';
import { requireTemporalCli } from '../../infra/temporal-cli';
import { FIXTURE_LIBRARY } from '../helpers/stack';
import { defaultBrain, startFakeOpenAI, type FakeOpenAI, type FakeRequest } from '../fakes/openai-server';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { waitFor } from '../helpers/sweep';
import { EVEN_FAILS, writeThreeKindBenchmark } from '../helpers/fake-benchmark';
import type { SweepSpec } from '../../engines/sweeps/sweep-file';
import { freePort } from '../helpers/ports';
import { workerEnv } from '../helpers/worker-processes';

const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const ITEMS = 100;
/** The fake provider's time from a batch's creation to its end: long enough that kills land while
 * batches are in flight, short enough that the sweep ends in a minute or two. */
const BATCH_DELAY_MS = 2_000;

let dir: string;
let server: DevServer;
let serverOptions: Parameters<typeof startDevServer>[0];
let llm: FakeOpenAI;
let repl: FakeRepl;
let results: ResultsDb;
let connection: Connection;
let client: Client;
const workers: Record<'main' | 'lean', { child?: ChildProcess; starts: number; stopping: boolean }> = {
  main: { starts: 0, stopping: false },
  lean: { starts: 0, stopping: false },
};

/** The real `driftline worker --queue Q` process; started again whenever it exits. */
function superviseWorker(queue: 'main' | 'lean'): void {
  const w = workers[queue];
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', queue], {
    env: {
      ...workerEnv({
        temporalAddress: server.address,
        dataDir: join(dir, 'data'),
        llmUrl: llm.url,
        replCmd: repl.command,
        replSandboxEnv: repl.sandboxEnv,
        leanPoolSize: 2,
      }),
      DRIFTLINE_LLM_BATCH: '1',
      // Batches fill from the whole window before they are sent.
      DRIFTLINE_LLM_BATCH_MAX_AGE_MS: '1000',
      DRIFTLINE_LLM_BATCH_POLL_MS: '300',
      DRIFTLINE_LLM_BATCH_READ_MS: '250',
      DRIFTLINE_LLM_BATCH_IDLE_MS: '5000',
      LEAN_TIMEOUT_MS: '20000',
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  w.child = child;
  w.starts++;
  child.once('exit', () => {
    if (!w.stopping) setTimeout(() => superviseWorker(queue), 200);
  });
}

async function kill(queue: 'main' | 'lean'): Promise<void> {
  const child = workers[queue].child!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-sweep-batch-crash-'));
  llm = await startFakeOpenAI({ handler: defaultBrain, batches: { delayMs: BATCH_DELAY_MS } });
  repl = fakeRepl(EVEN_FAILS);
  serverOptions = {
    cli: requireTemporalCli(),
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: join(dir, 'temporal.db'),
    namespace: 'default',
    logFile: join(dir, 'temporal.log'),
  };
  server = await startDevServer(serverOptions);
  connection = await connectTemporal({ address: server.address });
  client = new Client({ connection });
  results = await ResultsDb.open(resultsLocation(join(dir, 'data')));
  superviseWorker('main');
  superviseWorker('lean');
});

afterAll(async () => {
  for (const w of Object.values(workers)) {
    w.stopping = true;
    if (w.child && w.child.exitCode === null) w.child.kill('SIGKILL');
  }
  await results?.close();
  await connection?.close();
  await server?.stop();
  await llm?.close();
  repl?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function spec(benchmark: string, batch: boolean): SweepSpec {
  return {
    benchmarks: [{ path: benchmark, format: 'rautoformalizer' }],
    library: FIXTURE_LIBRARY,
    samples: 1,
    // The whole first half at once, so that batches fill.
    window: 100,
    maxAttempts: 3,
    leaveOut: 'item',
    // No reply cache: the synchronous twin must ask the provider itself.
    configurations: [
      { name: 'drift', config: { repairRounds: 1, cache: false } },
      { name: 'bare', config: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false, cache: false } },
    ],
    ...(batch ? { llm: { batch: true } } : {}),
  };
}

const doneInDb = async (id: string) => Object.values(await results.counts(id)).reduce((a, c) => a + c.done, 0);

/** Batches at the fake provider that have not ended. */
const inFlightAtProvider = () => llm.batches.all().filter((b) => !batchEnded(b.status as ProviderBatchStatus)).length;

/** Waits until at least `runs` runs are recorded and a batch is at the provider. */
async function whileBatchesInFlight(id: string, runs: number): Promise<void> {
  await waitFor(
    `${runs} runs recorded and a batch in flight`,
    async () => inFlightAtProvider() > 0 && (await doneInDb(id)) >= runs,
    240_000,
  );
}

/** A worker's start probe of the provider's structured output (sent one at a time, as it should be). */
const isProbe = (r: FakeRequest) => r.response_format?.type === 'json_schema' && r.response_format.json_schema?.name === 'probe';

/** What a run's metrics are computed from, without what differs between two sweeps. */
function essence(r: SweepRunRecord) {
  return {
    config: r.config,
    item: r.item,
    sample: r.sample,
    outcome: r.outcome,
    compiled: r.compiled,
    judgeGrade: r.judgeGrade,
    faithful: r.faithful,
    attempts: r.attempts,
    premises: r.premises,
  };
}

async function finish(id: string): Promise<SweepProgress> {
  return (await waitFor(
    `sweep ${id} to complete`,
    async () =>
      client.workflow
        .getHandle(id)
        .result()
        .catch(() => undefined) as Promise<SweepProgress | undefined>,
    600_000,
  ))!;
}

it('a batch-mode sweep survives kill -9 of the main worker (twice) and of the dev server with batches in flight: every run once, every request submitted once, the synchronous records', async () => {
  const benchmark = join(dir, 'batch-crash.dev.jsonl');
  writeThreeKindBenchmark(benchmark, { items: ITEMS, prefix: 'BatchCrash', source: (i) => (i < 50 ? 'A' : 'B') });
  const items = await loadBenchmarks(spec(benchmark, true).benchmarks);
  const t0 = Date.now();
  await startSweep(client, results, spec(benchmark, true), items, { id: 'batched' });

  // First kill: the first batches are at the provider, their calls wait in the worker.
  await whileBatchesInFlight('batched', 0);
  const kills: Array<{ what: string; at: number; inFlight: number; done: number }> = [];
  const note = async (what: string) =>
    kills.push({ what, at: Date.now() - t0, inFlight: inFlightAtProvider(), done: await doneInDb('batched') });
  await note('main worker');
  await kill('main');
  // The dev server dies with batches in flight and comes back on the same port with the same history file.
  await whileBatchesInFlight('batched', 40);
  await note('dev server');
  server.process.kill('SIGKILL');
  await new Promise((resolve) => server.process.once('exit', resolve));
  server = await startDevServer(serverOptions);
  await whileBatchesInFlight('batched', 110);
  await note('main worker');
  await kill('main');

  const final = await finish('batched');
  const batchedMs = Date.now() - t0;
  expect(final).toMatchObject({ status: 'completed', total: 200, done: 200, failed: 0 });
  expect(workers.main.starts).toBeGreaterThanOrEqual(3);
  // Each kill landed while the provider held a batch.
  for (const k of kills) expect(k.inFlight).toBeGreaterThan(0);

  // Every run recorded once.
  const batched = await results.runs('batched');
  expect(batched).toHaveLength(200);
  const units = batched.map((r) => `${r.config}/${r.item}/${r.sample}`);
  expect(new Set(units).size).toBe(200);
  for (const config of ['drift', 'bare']) for (let i = 0; i < ITEMS; i++) expect(units).toContain(`${config}/BatchCrash.item_${i}/0`);

  // Every request went in a batch, and the provider was asked for each custom_id once (a
  // resubmission after an error line aside, counted apart; none is expected here).
  const stats = llm.batches.stats();
  expect(llm.requests.filter((r) => r.batch === undefined && !isProbe(r))).toEqual([]);
  expect(stats.duplicateSubmissions).toBe(0);
  expect(stats.duplicates).toEqual([]);
  const submissions = Object.values(stats.submissions).reduce((a, n) => a + n, 0);
  expect(submissions).toBe(stats.firstSubmissions + stats.resubmissions);
  const counts = await sweepBatchCounts(results.driver, 'batched');
  expect(counts).toMatchObject({ inFlight: 0, synchronous: 0, submitted: stats.batchesCreated, requests: submissions });
  // Batches filled from the window: far fewer batches than requests.
  expect(stats.batchesCreated).toBeLessThan(submissions / 5);

  // The same sweep sent one call at a time: the same records.
  const before = llm.requests.length;
  const t1 = Date.now();
  await startSweep(client, results, spec(benchmark, false), items, { id: 'synchronous' });
  expect(await finish('synchronous')).toMatchObject({ status: 'completed', total: 200, done: 200, failed: 0 });
  const synchronousMs = Date.now() - t1;
  expect(llm.requests.slice(before).filter((r) => r.batch !== undefined)).toEqual([]);
  expect(llm.batches.stats().batchesCreated).toBe(stats.batchesCreated);
  const synchronous = await results.runs('synchronous');
  expect(batched.map(essence)).toEqual(synchronous.map(essence));
  // Not trivially equal: both outcomes occur.
  const compiled = synchronous.filter((r) => r.config === 'drift' && r.compiled === true).length;
  expect(compiled).toBeGreaterThan(0);
  expect(compiled).toBeLessThan(ITEMS);

  console.log(
    JSON.stringify({
      kills,
      batchedMs,
      synchronousMs,
      batches: stats.batchesCreated,
      linesPerBatch: stats.linesPerBatch,
      requests: submissions,
      resubmissions: stats.resubmissions,
    }),
  );
}, 1_200_000);
