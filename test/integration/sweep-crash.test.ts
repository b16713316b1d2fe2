// Durability of a sweep: 100 items × 2 configurations against the fakes, with the real worker
// processes and a file-backed Temporal dev server. While it runs, the main worker is killed
// with SIGKILL twice, the Lean worker once and the dev server once; each is started again. The
// sweep completes, the results database holds every (configuration, item, sample) exactly once,
// and the records equal those of the same sweep run without interruption.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, type Connection } from '@temporalio/client';
import { connectTemporal } from '../../infra/temporal-connection';
import type { SweepProgress, SweepRunRecord } from '../../common/sweep';
import { startSweep } from '../../client/sweeps';
import { ResultsDb, resultsLocation } from '../../engines/results/results-db';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import { startDevServer, type DevServer } from '../../infra/temporal-server';
import { requireTemporalCli } from '../../infra/temporal-cli';
import { FIXTURE_CORPUS, FIXTURE_LIBRARY } from '../helpers/stack';
import { defaultBrain, FAKE_MODELS, startFakeOpenAI, type FakeHandler, type FakeOpenAI } from '../fakes/openai-server';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import { waitFor } from '../helpers/sweep';
import type { SweepSpec } from '../../engines/sweeps/sweep-file';
import { freePort } from '../helpers/ports';

const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const ITEMS = 100;

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
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
      DRIFTLINE_DATA_DIR: join(dir, 'data'),
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'test-key',
      DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
      DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
      DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
      LEAN_REPL_CMD: repl.command,
      ...repl.sandboxEnv,
      LEAN_POOL_SIZE: '2',
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

// Items whose statements take the fake brain's three paths: primes compile and are faithful,
// "even" statements never compile (the fake Lean refuses them), the rest compile.
function writeBenchmark(file: string): void {
  const kinds = [
    (i: number) => `If p is a prime number larger than ${i} then p is at least 2.`,
    (i: number) => `Twice the number ${i} is even.`,
    (i: number) => `The square of the real number ${i} is nonnegative.`,
  ];
  const lines = Array.from({ length: ITEMS }, (_, i) =>
    JSON.stringify({
      full_name: `Crash.item_${i}`,
      informal_stmt: kinds[i % 3]!(i),
      formal_stmt: `theorem thm_P : True := by sorry`,
      mathlib_dependencies: i % 3 === 0 ? ['Nat.Prime'] : [],
      source: i < 50 ? 'A' : 'B',
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
}

// A little latency per formalizer call, so that kills land while runs are in flight.
const brain: FakeHandler = async (req) => {
  if (req.model === FAKE_MODELS.formalizer) await new Promise((r) => setTimeout(r, 20));
  return defaultBrain(req);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-sweep-crash-'));
  llm = await startFakeOpenAI({ handler: brain });
  repl = fakeRepl({ typeMismatchPatterns: ['Even \\(2 \\* n\\)'] });
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

function spec(benchmark: string): SweepSpec {
  return {
    benchmarks: [{ path: benchmark, format: 'rautoformalizer' }],
    library: FIXTURE_LIBRARY,
    samples: 1,
    window: 16,
    maxAttempts: 3,
    leaveOut: 'item',
    configurations: [
      { name: 'drift', config: { repairRounds: 1 } },
      { name: 'bare', config: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false } },
    ],
  };
}

const doneInDb = async (id: string) => Object.values(await results.counts(id)).reduce((a, c) => a + c.done, 0);

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

it('survives kill -9 of both workers and of the dev server; every unit recorded exactly once, as in an uninterrupted run', async () => {
  const benchmark = join(dir, 'crash.dev.jsonl');
  writeBenchmark(benchmark);
  const items = await loadBenchmarks(spec(benchmark).benchmarks);
  // A low history limit: the sweep also continues as new while processes die.
  await startSweep(client, results, spec(benchmark), items, { id: 'crash', historyLimit: 600 });

  await waitFor('20 runs', async () => (await doneInDb('crash')) >= 20, 120_000);
  await kill('main');
  await waitFor('50 runs', async () => (await doneInDb('crash')) >= 50, 120_000);
  await kill('lean');
  await waitFor('80 runs', async () => (await doneInDb('crash')) >= 80, 120_000);
  // The dev server dies and comes back on the same port with the same history file.
  server.process.kill('SIGKILL');
  await new Promise((resolve) => server.process.once('exit', resolve));
  server = await startDevServer(serverOptions);
  await waitFor('120 runs', async () => (await doneInDb('crash')) >= 120, 180_000);
  await kill('main');

  const final = (await waitFor(
    'the sweep to complete',
    async () =>
      client.workflow
        .getHandle('crash')
        .result()
        .catch(() => undefined) as Promise<SweepProgress | undefined>,
    600_000,
  ))!;
  expect(final).toMatchObject({ status: 'completed', total: 200, done: 200, failed: 0 });
  expect(workers.main.starts).toBeGreaterThanOrEqual(3);
  expect(workers.lean.starts).toBeGreaterThanOrEqual(2);

  const crashed = await results.runs('crash');
  expect(crashed).toHaveLength(200);
  const units = crashed.map((r) => `${r.config}/${r.item}/${r.sample}`);
  expect(new Set(units).size).toBe(200);
  for (const config of ['drift', 'bare']) for (let i = 0; i < ITEMS; i++) expect(units).toContain(`${config}/Crash.item_${i}/0`);

  // The same sweep, nothing killed: the same records, so the same metrics.
  await startSweep(client, results, spec(benchmark), items, { id: 'calm' });
  await waitFor(
    'the uninterrupted sweep to complete',
    async () => (await client.workflow.getHandle('calm').describe()).status.name === 'COMPLETED',
    600_000,
  );
  const calm = await results.runs('calm');
  expect(crashed.map(essence)).toEqual(calm.map(essence));
  const rate = (rs: SweepRunRecord[], config: string, key: 'compiled' | 'faithful') =>
    rs.filter((r) => r.config === config && r[key] === true).length;
  for (const config of ['drift', 'bare']) {
    expect(rate(crashed, config, 'compiled')).toBe(rate(calm, config, 'compiled'));
    expect(rate(crashed, config, 'faithful')).toBe(rate(calm, config, 'faithful'));
  }
  // Not trivially equal: both outcomes occur.
  expect(rate(calm, 'drift', 'compiled')).toBeGreaterThan(0);
  expect(rate(calm, 'drift', 'compiled')).toBeLessThan(ITEMS);
}, 1_200_000);
