// Sweep orchestration on a file-backed Temporal dev server, and with --backends dev,cluster also
// on a Temporal cluster on PostgreSQL (infra/temporal-cluster.ts; --shards N history shards),
// with in-process workers:
//  1. throughput in runs per second at window 1, 4, 16 and 64, with instant in-process fakes for
//     every activity (so only orchestration is measured); target ≥ 10 runs/s at window 16;
//  2. the overhead of one durable `formalize` run against the same activity functions (the real
//     ones, over the fake LLM server and fake Lean REPL) called in process, per activity;
//     target ≤ 10 ms;
//  3. a large sweep (default 10,000 runs) with instant fakes: that it completes, its rate, and
//     the parent workflow's largest history length over its continueAsNew runs.
// CPU seconds of the dev server and of this process (workers + client) show where time goes.
//
//   npx tsx bench/sweep.bench.ts [--json] [--big-runs N] [--no-big] [--parts throughput,overhead,big] [--windows 1,4,16,64]
//                                [--backends dev,cluster] [--shards 4]
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../infra/temporal-connection';
import { MockActivityEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities, createLeanActivities } from '../activities';
import { createSweepActivities } from '../activities/sweep';
import { startSweep } from '../client/sweeps';
import { startFormalization } from '../client/runs';
import type { BenchmarkItem, SweepProgress } from '../common/sweep';
import type { LeanActivities, MainActivities } from '../common/activities';
import type { RunConfig } from '../common/run-config-schema';
import { createLlmClient } from '../engines/llm/client';
import { createLeanRunner } from '../engines/lean/create-runner';
import { NameDirectory } from '../engines/lean/name-directory';
import { IndexRegistry } from '../engines/retrieval/index-registry';
import { ResultsDb } from '../engines/results/results-db';
import type { SweepSpec } from '../engines/sweeps/sweep-file';
import { DEV_SERVER_TUNING, startDevServer } from '../infra/temporal-server';
import { requireTemporalCli } from '../infra/temporal-cli';
import { requireClusterTools } from '../infra/temporal-cluster-tools';
import { startCluster } from '../infra/temporal-cluster';
import { WORKFLOWS_PATH } from '../infra/workers';
import { FAKE_MODELS, startFakeOpenAI } from '../test/fakes/openai-server';
import { fakeRepl } from '../test/fakes/fake-repl-harness';
import { historyTimings, type HistoryTimings } from './history-timings';
import { freePort as lowFreePort } from '../test/helpers/ports';

const args = process.argv.slice(2);
const json = args.includes('--json');
const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const bigRuns = args.includes('--no-big') ? 0 : Number(flag('--big-runs') ?? 0) || 10_000;
const parts = new Set((flag('--parts') ?? 'throughput,overhead,big').split(','));
const backendNames = (flag('--backends') ?? 'dev').split(',');
for (const name of backendNames) if (name !== 'dev' && name !== 'cluster') throw new Error(`--backends: "${name}" is not dev or cluster`);
const shards = Number(flag('--shards') ?? 4);
if (!Number.isInteger(shards) || shards < 1) throw new Error(`--shards must be a whole number ≥ 1, not ${flag('--shards')}`);
const CORPUS = fileURLToPath(new URL('../test/fixtures/corpus/mini.jsonl', import.meta.url));
const log = (msg: string) => !json && process.stderr.write(`${msg}\n`);

/** What else the machine is doing: load averages and whether the CI suite loop's vitest runs. */
function machine() {
  let suiteRunning: boolean | undefined;
  try {
    suiteRunning = execFileSync('pgrep', ['-f', '/work/wt/ci/node_modules/.bin/vitest'], { encoding: 'utf8' }).trim().length > 0;
  } catch {
    suiteRunning = false;
  }
  return { at: new Date().toISOString(), loadavg: loadavg().map((l) => +l.toFixed(2)), suiteRunning };
}
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {
  // not a git checkout
}
const machineAtStart = machine();

Runtime.install({ logger: new DefaultLogger('ERROR') });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s)
  } catch {
    return NaN;
  }
}
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

// ---- instant fakes: every activity answers at once ----
// Only the activities the formalize workflow calls in DRIFT mode.
const instantMain: Partial<MainActivities> = {
  decompose: async () => [{ phrase: 'p is a prime number', formal: 'Nat.Prime p' }],
  retrieve: async () => ({ premises: [{ name: 'Nat.Prime', kind: 'def', declaration: 'def Nat.Prime (p : ℕ) : Prop' }], notes: [] }),
  illustrate: async () => [],
  formalize: async () => 'theorem bench (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry',
  judge: async () => ({ grade: 10, faithful: true, explanation: 'instant' }),
  llmUsage: async () => ({ usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, cache: { hits: 0, misses: 0 } }),
};
const instantLean: Partial<LeanActivities> = {
  compile: async () => ({ status: 'ok', messages: [], durationMs: 0 }),
  inspectName: async ({ name }) => ({ name, exists: true }),
  resolveName: async ({ token }) => ({ token, suggestions: [], considered: 0 }),
  equivalence: async () => {
    throw new Error('not used');
  },
};

const WORKER_OPTIONS = { maxConcurrentActivityTaskExecutions: 64, maxConcurrentWorkflowTaskExecutions: 64, maxCachedWorkflows: 2000 };

const dir = mkdtempSync(join(tmpdir(), 'driftline-bench-sweep-'));
const cli = requireTemporalCli();
const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('ERROR') });

/** A Temporal server (the dev server, or a cluster) with its clients and a results database. */
interface Backend {
  name: string;
  /** CPU seconds the server has used so far (a cluster's: its four services and PostgreSQL). */
  serverCpu(): number;
  /** The same, split, where there is something to split. */
  serverCpuParts?(): Record<string, number>;
  client: Client;
  native: NativeConnection;
  results: ResultsDb;
  close(): Promise<void>;
}

async function openBackend(name: string, tuned = true): Promise<Backend> {
  const server = await startDevServer({
    cli,
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: join(dir, name, 'temporal.db'),
    namespace: 'default',
    logFile: join(dir, name, 'temporal.log'),
    tuned,
  });
  const connection = await connectTemporal({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const results = await ResultsDb.open({ file: join(dir, name, 'results.sqlite') });
  return {
    name,
    serverCpu: () => cpuSeconds(server.process.pid!),
    client: new Client({ connection }),
    native,
    results,
    async close() {
      await results.close();
      await connection.close();
      await native.close();
      await server.stop();
    },
  };
}

/** A Temporal cluster on PostgreSQL as `npm run cluster` runs it, results in PostgreSQL on the
 * same server. PostgreSQL with synchronous_commit=off (a commit returns before its WAL is
 * written): the closest to the dev server's SQLite synchronous=NORMAL, but a crash of PostgreSQL
 * itself may then lose the last fraction of a second of commits, which a production cluster
 * should not accept. */
async function openClusterBackend(name: string): Promise<Backend> {
  // Below the ephemeral range (test/helpers/ports.ts): also what the membership ports need, which
  // the SQL schema stores as a smallint (at most 32767).
  const port = () => lowFreePort();
  const cluster = await startCluster({
    tools: requireClusterTools(),
    dir: join(dir, name),
    ports: {
      frontend: await port(),
      frontendHttp: await port(),
      history: await port(),
      matching: await port(),
      worker: await port(),
      frontendMembership: await port(),
      historyMembership: await port(),
      matchingMembership: await port(),
      workerMembership: await port(),
    },
    postgresPort: await port(),
    postgresSettings: ['synchronous_commit=off'],
    shards,
    ui: false,
  });
  const connection = await connectTemporal({ address: cluster.address });
  const native = await NativeConnection.connect({ address: cluster.address });
  const results = await ResultsDb.open({ url: cluster.resultsUrl, file: join(dir, name, 'unused.sqlite') });
  return {
    name,
    serverCpu: () => {
      const c = cluster.cpuSeconds();
      return c.temporal + c.postgres;
    },
    serverCpuParts: () => cluster.cpuSeconds(),
    client: new Client({ connection }),
    native,
    results,
    async close() {
      await results.close();
      await connection.close();
      await native.close();
      await cluster.stop();
    },
  };
}

// PostgreSQL refuses a data folder it cannot enter (as root it runs as `postgres`).
chmodSync(dir, 0o755);
// The dev server as `npm start` runs it (DEV_SERVER_TUNING), and the cluster when asked for.
const main = await openBackend('tuned');
const { client, results } = main;
const backends: Backend[] = [];
for (const name of backendNames) backends.push(name === 'dev' ? main : await openClusterBackend('cluster'));

async function withWorkers<T>(backend: Backend, queue: string, mainActs: object, lean: object, fn: () => Promise<T>): Promise<T> {
  const workers = [
    await Worker.create({
      connection: backend.native,
      taskQueue: `${queue}-main`,
      activities: mainActs,
      workflowBundle: bundle,
      ...WORKER_OPTIONS,
    }),
    await Worker.create({
      connection: backend.native,
      taskQueue: `${queue}-lean`,
      activities: lean,
      maxConcurrentActivityTaskExecutions: 64,
    }),
  ];
  const work = fn();
  const [result] = await Promise.all([work, ...workers.map((w) => w.runUntil(work.catch(() => undefined)))]);
  return result as T;
}

function items(n: number): BenchmarkItem[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `Bench.item_${i}`,
    informal: `If p is a prime number larger than ${i} then p is at least 2.`,
    goldPremises: ['Nat.Prime'],
    tags: { split: 'bench' },
  }));
}

/** The cheapest real run: draft, compile, usage (3 activities); the large sweep uses it, since
 * what it measures is the parent's bookkeeping over many children, not the children. */
const ZERO_SHOT = { decompose: false, retrieval: 'none', illustrate: false, judge: false, repairRounds: 0 } as const;

function spec(window: number, cells: number, config: Partial<RunConfig> = { repairRounds: 0 }): SweepSpec {
  return {
    benchmarks: [],
    library: 'mini',
    samples: 1,
    window,
    maxAttempts: 2,
    leaveOut: 'item',
    configurations: Array.from({ length: cells }, (_, i) => ({ name: `c${i}`, config })),
  };
}

interface SweepTiming {
  runs: number;
  window: number;
  seconds: number;
  runsPerSecond: number;
  /** CPU seconds over the sweep, and as a share of its wall time (1.0 = one core busy). */
  serverCpuSeconds: number;
  workerCpuSeconds: number;
  serverCpuShare: number;
  workerCpuShare: number;
  /** Server CPU per run; for a cluster split into its Temporal services and PostgreSQL. */
  serverCpuMsPerRun: number;
  serverCpuMsPerRunBy?: Record<string, number>;
  /** Server + worker CPU per run, and the rate that would take if every core were ours: the
   * ceiling on this machine, whatever else runs on it. */
  cpuMsPerRun: number;
  ceilingRunsPerSecond: number;
  loadavgAfter: number[];
  /** From the histories of a sample of child runs, and of the parent's last run. */
  children?: HistoryTimings;
  parent?: HistoryTimings;
}

const SAMPLE = 20;

async function timeSweep(
  id: string,
  window: number,
  itemCount: number,
  cells: number,
  config?: Partial<RunConfig>,
  backend: Backend = main,
): Promise<SweepTiming> {
  const { client, results } = backend;
  const queue = `bench-${id}`;
  const sweepActs = createSweepActivities({ results });
  const timing = await withWorkers(backend, queue, { ...instantMain, ...sweepActs }, instantLean, async () => {
    const cpu0 = backend.serverCpu();
    const parts0 = backend.serverCpuParts?.();
    const self0 = selfCpu();
    const t0 = performance.now();
    await startSweep(client, results, spec(window, cells, config), items(itemCount), {
      id,
      taskQueue: `${queue}-main`,
      leanTaskQueue: `${queue}-lean`,
    });
    // Progress every 30 s (the sweep's own query), so a long sweep shows its rate as it goes.
    const ticker = setInterval(() => {
      void client.workflow
        .getHandle(id)
        .query<SweepProgress>('progress')
        .then((p) =>
          log(
            `  ${id}: ${p.done}/${p.total} done, ${p.rate.toFixed(2)} runs/s, generation ${p.generation}, ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${loadavg()[0]!.toFixed(1)}`,
          ),
        )
        .catch(() => undefined);
    }, 30_000);
    const final = (await client.workflow
      .getHandle(id)
      .result()
      .finally(() => clearInterval(ticker))) as SweepProgress;
    const seconds = (performance.now() - t0) / 1000;
    if (final.done !== itemCount * cells || final.failed !== 0) throw new Error(`sweep ${id} ended with ${JSON.stringify(final)}`);
    const serverCpu = backend.serverCpu() - cpu0;
    const parts1 = backend.serverCpuParts?.();
    const serverCpuMsPerRunBy =
      parts0 && parts1
        ? Object.fromEntries(Object.entries(parts1).map(([k, v]) => [k, +(((v - parts0[k]!) / final.done) * 1000).toFixed(1)]))
        : undefined;
    const workerCpu = selfCpu() - self0;
    return {
      runs: final.done,
      window,
      seconds: +seconds.toFixed(2),
      runsPerSecond: +(final.done / seconds).toFixed(2),
      serverCpuSeconds: +serverCpu.toFixed(2),
      workerCpuSeconds: +workerCpu.toFixed(2),
      serverCpuShare: +(serverCpu / seconds).toFixed(2),
      serverCpuMsPerRun: +((serverCpu / final.done) * 1000).toFixed(1),
      ...(serverCpuMsPerRunBy ? { serverCpuMsPerRunBy } : {}),
      workerCpuShare: +(workerCpu / seconds).toFixed(2),
      cpuMsPerRun: +(((serverCpu + workerCpu) / final.done) * 1000).toFixed(1),
      ceilingRunsPerSecond: +(cpus().length / ((serverCpu + workerCpu) / final.done)).toFixed(2),
      loadavgAfter: loadavg().map((l) => +l.toFixed(2)),
    };
  });
  // A sample of children spread over the sweep (not the first ones, which start cold).
  const step = Math.max(1, Math.floor(itemCount / SAMPLE));
  const sampleIds = Array.from(
    { length: Math.min(SAMPLE, itemCount) },
    (_, i) => `${id}/c0/Bench.item_${Math.min(itemCount - 1, i * step)}/0`,
  );
  return { ...timing, children: await historyTimings(backend.client, sampleIds), parent: await historyTimings(backend.client, [id]) };
}

const report: Record<string, unknown> = {
  commit,
  cores: cpus().length,
  node: process.version,
  machineAtStart,
};

// 1. Throughput by window, on each backend.
if (parts.has('throughput')) {
  const throughput: Record<string, Record<string, SweepTiming>> = {};
  const windows = (flag('--windows') ?? '1,4,16,64').split(',').map(Number);
  const itemsFor: Record<number, number> = { 1: 20, 4: 60, 16: 160, 64: 320 };
  for (const backend of backends) {
    throughput[backend.name] = {};
    for (const window of windows) {
      const n = itemsFor[window] ?? window * 10;
      log(`throughput (${backend.name}): window ${window}, ${n * 2} runs …`);
      const t = await timeSweep(`tp-${backend.name}-${window}`, window, n, 2, undefined, backend);
      throughput[backend.name]![`window${window}`] = t;
      log(`  ${JSON.stringify(t)}`);
    }
  }
  report.throughput = throughput;
}

// 1b. Dev server settings: the same window-16 sweep on a dev server with its own defaults and
// on one with DEV_SERVER_TUNING, alternated (untuned, tuned, untuned, tuned) so a change in the
// machine's load hits both.
if (parts.has('tuning')) {
  const untuned = await openBackend('untuned', false);
  const rounds: { untuned: SweepTiming[]; tuned: SweepTiming[] } = { untuned: [], tuned: [] };
  for (let r = 0; r < 2; r++) {
    for (const backend of [untuned, main]) {
      log(`tuning: ${backend.name} dev server, window 16, 120 runs (round ${r + 1}) …`);
      const t = await timeSweep(`tune-${backend.name}-${r}`, 16, 60, 2, undefined, backend);
      rounds[backend.name as 'untuned' | 'tuned'].push(t);
      log(
        `  ${JSON.stringify({ runsPerSecond: t.runsPerSecond, serverCpuShare: t.serverCpuShare, workerCpuShare: t.workerCpuShare, serverCpuMsPerRun: +((t.serverCpuSeconds / t.runs) * 1000).toFixed(1), act: t.children?.activityScheduleToStart, wft: t.children?.workflowTaskScheduleToStart })}`,
      );
    }
  }
  report.tuning = { flags: DEV_SERVER_TUNING, ...rounds };
  await untuned.close();
}

// 2. Overhead per activity: the real activities over the fakes, in process vs durable.
if (parts.has('overhead')) {
  const llm = await startFakeOpenAI();
  const repl = fakeRepl({});
  const lean = createLeanRunner({ replCmd: repl.command, header: 'import Mathlib', timeoutMs: 20_000, sandbox: repl.sandbox });
  const indexes = new IndexRegistry({ libraries: [{ name: 'mini', corpusPath: CORPUS }], dir: join(dir, 'indexes') });
  const realMain = createActivities({
    llm: createLlmClient({
      baseURL: llm.url,
      apiKey: 'k',
      models: { decomposer: FAKE_MODELS.decomposer, formalizer: FAKE_MODELS.formalizer, judge: FAKE_MODELS.judge },
      timeoutMs: 10_000,
      maxReasks: 2,
    }),
    indexes,
  });
  const realLean = createLeanActivities({ lean, timeoutMs: 20_000, names: new NameDirectory([{ name: 'mini', corpusPath: CORPUS }]) });
  const STATEMENT = 'If p is a prime number then p is at least 2.';

  // The same calls, in the same order, as the formalize workflow makes for this statement with
  // the default configuration (checked below against the durable run's history).
  // Each call in a mock activity context, as activities expect one (heartbeats, the LLM meter).
  const activityEnv = new MockActivityEnvironment();
  const call = <A extends unknown[], R>(fn: (...a: A) => Promise<R>, ...a: A): Promise<R> => activityEnv.run(fn, ...a);
  async function inProcess(): Promise<number> {
    const subqueries = await call(realMain.decompose, { statement: STATEMENT });
    const { premises } = await call(realMain.retrieve, {
      library: 'mini',
      statement: STATEMENT,
      subqueries,
      mode: 'drift',
      topK: 5,
      exclude: [],
      gold: [],
    });
    const examples = await call(realMain.illustrate, {
      library: 'mini',
      statement: STATEMENT,
      premises: premises.map((p) => p.name),
      m: 3,
      exclude: [],
    });
    const formal = await call(realMain.formalize, { statement: STATEMENT, premises, examples });
    const compiled = await call(realLean.compile, { code: formal });
    await call(realMain.judge, { statement: STATEMENT, formalStatement: formal, compiled: compiled.status === 'ok', checked: true });
    await call(realMain.llmUsage, { runId: 'in-process' });
    return 7;
  }
  const N = 30;
  for (let i = 0; i < 3; i++) await inProcess(); // warm: index opened, REPL header imported
  const t = performance.now();
  let inProcessActivities = 0;
  for (let i = 0; i < N; i++) inProcessActivities = await inProcess();
  const inProcessMs = (performance.now() - t) / N;
  const overhead: Record<string, unknown> = {};
  for (const backend of backends) {
    const ids = Array.from({ length: N }, (_, i) => `overhead-${backend.name}-${i}`);
    const durableMs = await withWorkers(backend, `bench-overhead-${backend.name}`, realMain, realLean, async () => {
      const run = async (id: string) => {
        await startFormalization(
          backend.client,
          { statement: STATEMENT, library: 'mini', config: { cache: false }, leanTaskQueue: `bench-overhead-${backend.name}-lean`, id },
          `bench-overhead-${backend.name}-main`,
        );
        await backend.client.workflow.getHandle(id).result();
      };
      for (let i = 0; i < 3; i++) await run(`overhead-${backend.name}-warm-${i}`);
      const t1 = performance.now();
      for (const id of ids) await run(id);
      return (performance.now() - t1) / N;
    });
    const timings = await historyTimings(backend.client, ids);
    const durableActivities = timings.activitiesPerWorkflow + timings.localActivitiesPerWorkflow;
    if (durableActivities !== inProcessActivities) {
      throw new Error(
        `the durable run ran ${durableActivities} activities (${timings.localActivitiesPerWorkflow} local), the in-process sequence calls ${inProcessActivities}: update inProcess()`,
      );
    }
    overhead[backend.name] = {
      runs: N,
      activitiesPerRun: inProcessActivities,
      inProcessMsPerRun: +inProcessMs.toFixed(2),
      durableMsPerRun: +durableMs.toFixed(2),
      overheadMsPerActivity: +((durableMs - inProcessMs) / inProcessActivities).toFixed(2),
      history: timings,
      loadavgAfter: loadavg().map((l) => +l.toFixed(2)),
    };
  }
  report.overhead = overhead;
  await lean.close();
  await llm.close();
  repl.cleanup();
  await indexes.close();
}

// 3. A large sweep: completes, and the parent's history stays bounded by continueAsNew.
if (parts.has('big') && bigRuns > 0) {
  log(`large sweep: ${bigRuns} runs, window 16, zero-shot configuration …`);
  const timing = await timeSweep('big', 16, Math.ceil(bigRuns / 2), 2, ZERO_SHOT);
  let parentRuns = 0;
  let largest = 0;
  for await (const wf of client.workflow.list({ query: `WorkflowId = 'big'` })) {
    parentRuns++;
    const d = await client.workflow.getHandle('big', wf.runId).describe();
    largest = Math.max(largest, d.historyLength);
  }
  const counts = await results.counts('big');
  report.bigSweep = {
    ...timing,
    config: ZERO_SHOT,
    parentRuns,
    largestParentHistory: largest,
    recorded: Object.values(counts).reduce((a, c) => a + c.done, 0),
  };
}

report.machineAtEnd = machine();
report.targets = { runsPerSecondAtWindow16: 20, overheadMsPerActivity: 10 };
report.backends = { names: backendNames, clusterHistoryShards: backendNames.includes('cluster') ? shards : undefined };
report.protocol =
  'dev: file-backed temporal dev server (temporal CLI start-dev, SQLite, with DEV_SERVER_TUNING as npm start runs it), SQLite results DB; ' +
  'cluster: npm run cluster (frontend, history, matching, worker processes of temporal-server 1.32.2 from infra/temporal/config.yaml, PostgreSQL 15 with synchronous_commit=off started for it, results in PostgreSQL), server CPU = the four services + PostgreSQL; ' +
  'workers in this process (64 activity and workflow-task slots, 2000 cached workflows); ' +
  "throughput and the large sweep: instant in-process activities, 2 configurations × N items × 1 sample, repairRounds 0, wall time from start to the parent's result; " +
  'overhead: the real activities over the fake LLM server and fake Lean REPL, 30 sequential runs after 3 warm-up runs (cache off), against the same 7 activity calls in process; ' +
  'history timings from a sample of 20 children (throughput) or all 30 runs (overhead)';

if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else {
  const lat = (h?: HistoryTimings) =>
    h
      ? `act s2s p50/p95 ${h.activityScheduleToStart.p50}/${h.activityScheduleToStart.p95} ms, wft s2s ${h.workflowTaskScheduleToStart.p50}/${h.workflowTaskScheduleToStart.p95} ms, wft run ${h.workflowTaskStartToComplete.p50}/${h.workflowTaskStartToComplete.p95} ms`
      : '';
  const row = (name: string, t: SweepTiming) =>
    `${name.padEnd(10)} ${String(t.runs).padStart(6)} runs  ${t.seconds.toFixed(1).padStart(7)} s  ${t.runsPerSecond.toFixed(1).padStart(6)} runs/s   CPU: server ${t.serverCpuShare}, workers ${t.workerCpuShare} cores, ${t.cpuMsPerRun} ms/run (all cores: ≤ ${t.ceilingRunsPerSecond} runs/s)\n             children: ${lat(t.children)}`;
  console.log(
    `commit ${commit}, ${report.cores} cores, load average at start ${machineAtStart.loadavg.join(' ')}${machineAtStart.suiteRunning ? ' (CI suite loop running)' : ''}`,
  );
  if (report.throughput) {
    for (const [backend, byWindow] of Object.entries(report.throughput as Record<string, Record<string, SweepTiming>>)) {
      console.log(
        `sweep throughput on ${backend === 'cluster' ? `the cluster (${shards} history shards)` : 'the dev server'} (instant fakes):`,
      );
      for (const [name, t] of Object.entries(byWindow)) {
        console.log(`  ${row(name, t)}`);
        if (t.serverCpuMsPerRunBy) console.log(`             server CPU per run: ${JSON.stringify(t.serverCpuMsPerRunBy)} ms`);
      }
    }
  }
  type Overhead = {
    durableMsPerRun: number;
    inProcessMsPerRun: number;
    activitiesPerRun: number;
    overheadMsPerActivity: number;
    history: HistoryTimings;
  };
  for (const [backend, o] of Object.entries((report.overhead ?? {}) as Record<string, Overhead>))
    console.log(
      `orchestration overhead (${backend}): ${o.durableMsPerRun} ms per durable run vs ${o.inProcessMsPerRun} ms in process, ${o.activitiesPerRun} activities: ${o.overheadMsPerActivity} ms per activity (target ≤ 10)\n  ${lat(o.history)}`,
    );
  const big = report.bigSweep as (SweepTiming & { parentRuns: number; largestParentHistory: number; recorded: number }) | undefined;
  if (big)
    console.log(
      `  ${row('large', big)}\n  parent runs ${big.parentRuns}, largest parent history ${big.largestParentHistory} events, recorded ${big.recorded}`,
    );
  console.log(`load average at end ${(report.machineAtEnd as { loadavg: number[] }).loadavg.join(' ')}`);
}
for (const backend of backends) if (backend !== main) await backend.close();
await main.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
