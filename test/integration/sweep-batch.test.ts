// Batch mode end to end, with the real worker process (`driftline worker --queue all`) and a
// Temporal dev server, against the fake provider's Batch API: a batch-mode sweep's calls go in
// batches (none one at a time), each custom_id is submitted once, the runs' records equal those
// of the same sweep run synchronously, and the ledger prices the batch calls at the batch factor.
// Then the provider's faults, each on a sweep of a few items: a failed, an expired and a partly
// failed batch have their lines sent again in a new batch (or one at a time when the sweep allows
// no resubmission), counted apart, and the runs' records are those of the synchronous sweep; a
// sweep cancelled while its batch is in flight has the batch cancelled at the provider.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, type Connection } from '@temporalio/client';
import { connectTemporal } from '../../infra/temporal-connection';
import type { SweepProgress, SweepRunRecord } from '../../common/sweep';
import { signalSweep, startSweep } from '../../client/sweeps';
import { ResultsDb, resultsLocation } from '../../engines/results/results-db';
import { sweepBatchCounts } from '../../engines/results/llm-batches';
import { batcherWorkflowId } from '../../common/llm-batch';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import type { BenchmarkItem } from '../../common/sweep';
import { sweepReportInput } from '../../client/sweep-report';
import { renderSweepReport } from '../../engines/report/write-report';
import { startDevServer, type DevServer } from '../../infra/temporal-server';
import { requireTemporalCli } from '../../infra/temporal-cli';
import { FIXTURE_CORPUS, FIXTURE_LIBRARY } from '../helpers/stack';
import { defaultBrain, FAKE_MODELS, startFakeOpenAI, type FakeBatchFault, type FakeOpenAI } from '../fakes/openai-server';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { waitFor } from '../helpers/sweep';
import { EVEN_FAILS, writeThreeKindBenchmark } from '../helpers/fake-benchmark';
import type { SweepSpec } from '../../engines/sweeps/sweep-file';
import { freePort } from '../helpers/ports';
import { workerEnv } from '../helpers/worker-processes';

const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const ITEMS = 12;
/** The fake's time from a batch's creation to its end. */
const PACE_MS = 120;

let dir: string;
let server: DevServer;
let llm: FakeOpenAI;
let repl: FakeRepl;
let results: ResultsDb;
let connection: Connection;
let client: Client;
let worker: ChildProcess;

const PRICES = {
  [FAKE_MODELS.decomposer]: { prompt: 1, completion: 2 },
  [FAKE_MODELS.formalizer]: { prompt: 3, completion: 6 },
  [FAKE_MODELS.judge]: { prompt: 1, completion: 1 },
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-sweep-batch-'));
  llm = await startFakeOpenAI({ handler: defaultBrain, batches: { delayMs: PACE_MS } });
  repl = fakeRepl(EVEN_FAILS);
  server = await startDevServer({
    cli: requireTemporalCli(),
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: join(dir, 'temporal.db'),
    namespace: 'default',
    logFile: join(dir, 'temporal.log'),
  });
  connection = await connectTemporal({ address: server.address });
  client = new Client({ connection });
  results = await ResultsDb.open(resultsLocation(join(dir, 'data')));
  worker = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', 'all'], {
    env: {
      ...workerEnv({
        temporalAddress: server.address,
        dataDir: join(dir, 'data'),
        llmUrl: llm.url,
        replCmd: repl.command,
        replSandboxEnv: repl.sandboxEnv,
        leanPoolSize: 2,
      }),
      DRIFTLINE_LLM_PRICES: JSON.stringify(PRICES),
      DRIFTLINE_LLM_BATCH: '1',
      // Short, so that the tests run in seconds: a batch ends in 120 ms at the fake.
      DRIFTLINE_LLM_BATCH_MAX_AGE_MS: '150',
      DRIFTLINE_LLM_BATCH_POLL_MS: '80',
      DRIFTLINE_LLM_BATCH_READ_MS: '50',
      DRIFTLINE_LLM_BATCH_IDLE_MS: '3000',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  worker.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  worker.once('exit', (code) => {
    if (code) console.error(`worker exited ${code}: ${err}`);
  });
});

/** What the stack and a shell beside it share: Temporal, the library, the data directory. */
function stackEnv(): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: server.address,
    DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
    DRIFTLINE_DATA_DIR: join(dir, 'data'),
  };
}

/** `driftline …` from a shell that has only the stack's address, library and data directory. */
function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...stackEnv() },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

afterAll(async () => {
  worker?.kill('SIGKILL');
  await results?.close();
  await connection?.close();
  await server?.stop();
  await llm?.close();
  repl?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function spec(benchmark: string, batch: boolean, resubmits?: number): SweepSpec {
  return {
    benchmarks: [{ path: benchmark, format: 'rautoformalizer' }],
    library: FIXTURE_LIBRARY,
    samples: 1,
    window: ITEMS,
    maxAttempts: 2,
    leaveOut: 'item',
    configurations: [{ name: 'drift', config: { repairRounds: 1, cache: false } }],
    ...(batch ? { llm: { batch: true, ...(resubmits !== undefined ? { resubmits } : {}) } } : {}),
  };
}

function essence(r: SweepRunRecord) {
  return { item: r.item, outcome: r.outcome, compiled: r.compiled, judgeGrade: r.judgeGrade, faithful: r.faithful, attempts: r.attempts };
}

async function finish(id: string): Promise<SweepProgress> {
  return (await waitFor(
    `sweep ${id} to complete`,
    async () =>
      client.workflow
        .getHandle(id)
        .result()
        .catch(() => undefined) as Promise<SweepProgress | undefined>,
    180_000,
  ))!;
}

/** The synchronous sweep over every item, run once: the records the batch-mode sweeps must equal. */
let syncSweep: Promise<SweepRunRecord[]> | undefined;
function syncRecords(benchmark: string, items: BenchmarkItem[]): Promise<SweepRunRecord[]> {
  syncSweep ??= (async () => {
    await startSweep(client, results, spec(benchmark, false), items, { id: 'sync' });
    expect(await finish('sync')).toMatchObject({ status: 'completed', done: ITEMS, failed: 0 });
    return results.runs('sync');
  })();
  return syncSweep;
}

const byItem = (rs: SweepRunRecord[]) => rs.map(essence).sort((a, b) => a.item.localeCompare(b.item));

let benchmark: string;
let items: BenchmarkItem[];

beforeAll(async () => {
  benchmark = join(dir, 'batch.dev.jsonl');
  writeThreeKindBenchmark(benchmark, { items: ITEMS, prefix: 'Batch' });
  items = await loadBenchmarks(spec(benchmark, false).benchmarks);
});

it('sends a batch-mode sweep through the Batch API: every call once, the same records, the batch price', async () => {
  const sync = await syncRecords(benchmark, items);
  const syncRequests = llm.requests.length;
  expect(llm.batches.stats().batchesCreated).toBe(0);

  await startSweep(client, results, spec(benchmark, true), items, { id: 'batched' });
  expect(await finish('batched')).toMatchObject({ status: 'completed', done: ITEMS, failed: 0 });
  // Nothing went one at a time: every request of the second sweep came in a batch line.
  const later = llm.requests.slice(syncRequests);
  expect(later.filter((r) => r.batch === undefined)).toEqual([]);
  const counts = llm.batches.stats();
  expect(counts.batchesCreated).toBeGreaterThan(0);
  expect(counts.duplicateSubmissions).toBe(0);
  expect(counts.resubmissions).toBe(0);
  // The same records as one at a time.
  expect(byItem(await results.runs('batched'))).toEqual(byItem(sync));

  const batches = await sweepBatchCounts(results.driver, 'batched');
  expect(batches).toMatchObject({ inFlight: 0, failed: 0, resubmitted: 0, synchronous: 0 });
  expect(batches.submitted).toBe(counts.batchesCreated);
  expect(batches.requests).toBe(counts.firstSubmissions);

  // The ledger priced the batch calls at half (the default batchFactor), and the report says so:
  // the same calls one at a time cost what the synchronous sweep paid.
  const report = async (id: string) => (await renderSweepReport((await sweepReportInput(results, id))!)).data;
  const syncReport = await report('sync');
  const batched = await report('batched');
  expect(syncReport.cost!.usd).toBeGreaterThan(0);
  expect(syncReport.cost!.usdIfSynchronous).toBeCloseTo(syncReport.cost!.usd!, 9);
  expect(batched.cost!.usdIfSynchronous).toBeCloseTo(syncReport.cost!.usd!, 9);
  expect(batched.cost!.usd).toBeCloseTo(syncReport.cost!.usd! / 2, 9);
  expect(batched.batches).toMatchObject({ submitted: counts.batchesCreated, requests: counts.firstSubmissions, resubmitted: 0 });
  expect(syncReport.batches).toBeUndefined();
  const rendered = await renderSweepReport((await sweepReportInput(results, 'batched'))!);
  expect(JSON.parse(rendered.json).cost).toMatchObject({ usd: batched.cost!.usd, usdIfSynchronous: batched.cost!.usdIfSynchronous });
  expect(rendered.markdown).toMatch(/LLM batches/);
}, 400_000);

it('starts a batch-mode sweep from the command line (--batch) and shows its batches in `sweep status --json`', async () => {
  const publicData = join(dir, 'data', 'data');
  mkdirSync(publicData, { recursive: true });
  writeThreeKindBenchmark(join(publicData, 'cli.dev.jsonl'), { items: ITEMS, prefix: 'Batch' });
  const file = join(dir, 'cli-sweep.json');
  writeFileSync(
    file,
    JSON.stringify({
      benchmark: { path: '$DATA/cli.dev.jsonl', format: 'rautoformalizer', limit: 4 },
      library: FIXTURE_LIBRARY,
      window: 8,
      configurations: { drift: { cache: false, repairRounds: 0 } },
    }),
  );
  const before = llm.batches.stats().batchesCreated;
  const started = cli(['sweep', 'start', file, '--batch', '--id', 'cli-batch']);
  expect(started.stderr).toBe('');
  expect(started.status).toBe(0);
  expect(await finish('cli-batch')).toMatchObject({ status: 'completed', done: 4, failed: 0 });
  const status = cli(['sweep', 'status', 'cli-batch', '--json']);
  expect(status.status).toBe(0);
  const batches = (JSON.parse(status.stdout) as { batches: Record<string, unknown> }).batches;
  expect(batches).toMatchObject({ inFlight: 0, failed: 0, completed: llm.batches.stats().batchesCreated - before });
  expect(batches.submitted).toBeGreaterThan(0);
  expect(batches.requests).toBeGreaterThanOrEqual(4 * 3); // decompose, formalize and judge for each run
  // Its text says so too.
  expect(cli(['sweep', 'status', 'cli-batch']).stdout).toMatch(/LLM batches: 0 in flight; \d+ submitted/);
}, 300_000);

/** A few items, one of each kind the fake brain answers differently. */
const FEW = 3;

/** Runs a batch-mode sweep over the first few items whose first batch meets `fault`; answers
 * what the fake counted meanwhile, the requests sent one at a time, and the sweep's batch counts. */
async function sweepMeeting(id: string, fault: FakeBatchFault, resubmits?: number) {
  const sync = await syncRecords(benchmark, items);
  const before = llm.batches.stats();
  const requestsBefore = llm.requests.length;
  llm.batches.failNext(fault);
  await startSweep(client, results, spec(benchmark, true, resubmits), items.slice(0, FEW), { id });
  expect(await finish(id)).toMatchObject({ status: 'completed', done: FEW, failed: 0 });
  const after = llm.batches.stats();
  // The first batch of this sweep is the one that met the fault.
  const faulted = before.linesPerBatch.length;
  expect(after.batchesCreated).toBeGreaterThan(before.batchesCreated);
  const linesHit = after.linesPerBatch[faulted]!;
  // The same records as the synchronous sweep's for these items.
  const few = new Set(items.slice(0, FEW).map((i) => i.id));
  expect(byItem(await results.runs(id))).toEqual(byItem(sync.filter((r) => few.has(r.item))));
  return {
    delta: {
      resubmissions: after.resubmissions - before.resubmissions,
      duplicateSubmissions: after.duplicateSubmissions - before.duplicateSubmissions,
      firstSubmissions: after.firstSubmissions - before.firstSubmissions,
      batchesCreated: after.batchesCreated - before.batchesCreated,
    },
    linesHit,
    oneAtATime: llm.requests.slice(requestsBefore).filter((r) => r.batch === undefined).length,
    batches: await sweepBatchCounts(results.driver, id),
  };
}

it('sends the lines of a failed batch again in a new batch, counted apart', async () => {
  const { delta, linesHit, oneAtATime, batches } = await sweepMeeting('failed-batch', { kind: 'failed' });
  expect(linesHit).toBeGreaterThan(0);
  // Every line of the failed batch came back in a later batch, and nothing was paid twice.
  expect(delta).toMatchObject({ resubmissions: linesHit, duplicateSubmissions: 0 });
  expect(oneAtATime).toBe(0);
  expect(batches).toMatchObject({ inFlight: 0, failed: 1, resubmitted: linesHit, synchronous: 0 });
  expect(batches.submitted).toBe(delta.batchesCreated);
  expect(batches.completed).toBe(delta.batchesCreated - 1);
  expect(batches.requests).toBe(delta.firstSubmissions + delta.resubmissions);
}, 200_000);

it('sends the lines an expired batch left undone again', async () => {
  const { delta, linesHit, batches } = await sweepMeeting('expired-batch', { kind: 'expired', lines: 1 });
  expect(linesHit).toBeGreaterThan(1);
  expect(delta).toMatchObject({ resubmissions: 1, duplicateSubmissions: 0 });
  expect(batches).toMatchObject({ inFlight: 0, failed: 1, resubmitted: 1, synchronous: 0 });
  expect(batches.requests).toBe(delta.firstSubmissions + 1);
}, 200_000);

it("sends the lines in a completed batch's error file again", async () => {
  const { delta, linesHit, batches } = await sweepMeeting('partial-batch', { kind: 'partial', lines: 2 });
  expect(linesHit).toBeGreaterThan(2);
  expect(delta).toMatchObject({ resubmissions: 2, duplicateSubmissions: 0 });
  // The batch itself completed; two of its lines went again.
  expect(batches).toMatchObject({ inFlight: 0, failed: 0, resubmitted: 2, synchronous: 0 });
  expect(batches.completed).toBe(delta.batchesCreated);
}, 200_000);

it('sends a failed line one at a time when the sweep allows no resubmission', async () => {
  const { delta, linesHit, oneAtATime, batches } = await sweepMeeting('no-resubmits', { kind: 'failed' }, 0);
  expect(delta).toMatchObject({ resubmissions: 0, duplicateSubmissions: 0 });
  // Each line of the failed batch was asked once more, synchronously.
  expect(oneAtATime).toBe(linesHit);
  expect(batches).toMatchObject({ inFlight: 0, failed: 1, resubmitted: 0, synchronous: linesHit });
}, 200_000);

it('cancels the batch in flight at the provider when its sweep is cancelled', async () => {
  // Long enough that the batch is still at the provider when the cancel arrives.
  llm.batches.setDelay(20_000);
  try {
    const before = llm.batches.stats().batchesCreated;
    await startSweep(client, results, spec(benchmark, true), items.slice(0, FEW), { id: 'cancelled' });
    const inFlight = await waitFor(
      'a batch in flight',
      async () => (await sweepBatchCounts(results.driver, 'cancelled')).batches[0],
      60_000,
    );
    await signalSweep(client, 'cancelled', 'cancel');
    const atProvider = await waitFor(
      'the provider to cancel the batch',
      async () => llm.batches.all().find((b) => b.id === inFlight.id && b.status === 'cancelled'),
      60_000,
    );
    expect(atProvider.cancelling_at).toEqual(expect.any(Number));
    expect(await finish('cancelled')).toMatchObject({ status: 'cancelled' });
    // Nothing more went to the provider for the cancelled sweep.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(llm.batches.stats().batchesCreated).toBe(before + 1);
    // The sweep's status stops showing the batch in flight: it is counted among the ended ones.
    await waitFor(
      'the batch to be recorded as ended',
      async () => (await sweepBatchCounts(results.driver, 'cancelled')).inFlight === 0,
      30_000,
    );
    expect(await sweepBatchCounts(results.driver, 'cancelled')).toMatchObject({ inFlight: 0, submitted: 1, failed: 1 });
  } finally {
    llm.batches.setDelay(PACE_MS);
  }
}, 200_000);

it('a sweep cancelled while its batch is finalizing: the provider refuses the cancel, the batch completes, the batcher ends cleanly', async () => {
  // Finalizing takes a quarter of the delay: time for the cancel to arrive then.
  llm.batches.setDelay(10_000);
  try {
    await startSweep(client, results, spec(benchmark, true), items.slice(0, FEW), { id: 'cancelled-late' });
    const inFlight = await waitFor(
      'a batch in flight',
      async () => (await sweepBatchCounts(results.driver, 'cancelled-late')).batches[0],
      60_000,
    );
    await waitFor(
      'the batch to be finalizing',
      async () => llm.batches.all().find((b) => b.id === inFlight.id && b.status === 'finalizing'),
      60_000,
    );
    await signalSweep(client, 'cancelled-late', 'cancel');
    expect(await finish('cancelled-late')).toMatchObject({ status: 'cancelled' });
    // The batcher that held the batch ends without failing, once the batch has ended.
    const batcher = client.workflow.getHandle(batcherWorkflowId('cancelled-late', 'default', inFlight.model));
    await expect(batcher.result()).resolves.toBeDefined();
    expect(await sweepBatchCounts(results.driver, 'cancelled-late')).toMatchObject({ inFlight: 0, completed: 1 });
  } finally {
    llm.batches.setDelay(PACE_MS);
  }
}, 200_000);
