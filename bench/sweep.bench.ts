// Sweep orchestration on a file-backed Temporal dev server with in-process workers:
//  1. throughput in runs per second at window 1, 4 and 16, with instant in-process fakes for
//     every activity (so only orchestration is measured); target ≥ 10 runs/s at window 16;
//  2. the overhead of one durable `formalize` run against the same activity functions (the real
//     ones, over the fake LLM server and fake Lean REPL) called in process, per activity;
//     target ≤ 10 ms;
//  3. a large sweep (default 10,000 runs) with instant fakes: that it completes, its rate, and
//     the parent workflow's largest history length over its continueAsNew runs.
// CPU seconds of the dev server and of this process (workers + client) show where time goes.
//
//   npx tsx bench/sweep.bench.ts [--json] [--big-runs N] [--no-big]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities, createLeanActivities } from '../activities';
import { createSweepActivities } from '../activities/sweep';
import { startSweep } from '../api/sweeps';
import { startFormalization } from '../api/runs';
import type { BenchmarkItem, SweepProgress } from '../common/sweep';
import type { FormalizeResult, LeanActivities, MainActivities } from '../common/types';
import { createLlmClient } from '../engines/llm/client';
import { createLeanRunner } from '../engines/lean/lean-runner';
import { NameDirectory } from '../engines/lean/name-directory';
import { IndexRegistry } from '../engines/retrieval/index-registry';
import { ResultsDb } from '../engines/results/results-db';
import type { SweepSpec } from '../engines/sweeps/sweep-file';
import { startDevServer } from '../infra/temporal-server';
import { requireTemporalCli } from '../infra/temporal-cli';
import { WORKFLOWS_PATH } from '../infra/workers';
import { FAKE_MODELS, startFakeOpenAI } from '../test/fakes/openai-server';
import { fakeRepl } from '../test/fakes/fake-repl-harness';

const args = process.argv.slice(2);
const json = args.includes('--json');
const bigRuns = args.includes('--no-big') ? 0 : Number(args[args.indexOf('--big-runs') + 1] ?? 0) || 10_000;
const CORPUS = fileURLToPath(new URL('../test/fixtures/corpus/mini.jsonl', import.meta.url));
const log = (msg: string) => !json && process.stderr.write(`${msg}\n`);

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
  draftStatement: async () => 'theorem bench (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry',
  judge: async () => ({ grade: 10, faithful: true, explanation: 'instant' }),
};
const instantLean: Partial<LeanActivities> = {
  compile: async () => ({ status: 'ok', messages: [], durationMs: 0 }),
  inspectName: async ({ name }) => ({ name, exists: true }),
  resolveName: async ({ token }) => ({ token, suggestions: [], considered: 0 }),
  equivalence: async () => {
    throw new Error('not used');
  },
};

const dir = mkdtempSync(join(tmpdir(), 'driftline-bench-sweep-'));
const cli = requireTemporalCli();
const server = await startDevServer({ cli, port: await freePort(), uiPort: await freePort(), dbFile: join(dir, 'temporal.db'), namespace: 'default', logFile: join(dir, 'temporal.log') });
const connection = await Connection.connect({ address: server.address });
const client = new Client({ connection });
const native = await NativeConnection.connect({ address: server.address });
const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('ERROR') });
const results = await ResultsDb.open({ file: join(dir, 'results.sqlite') });

async function withWorkers<T>(queue: string, main: object, lean: object, fn: () => Promise<T>): Promise<T> {
  const workers = [
    await Worker.create({ connection: native, taskQueue: `${queue}-main`, activities: main, workflowBundle: bundle, maxConcurrentActivityTaskExecutions: 64, maxConcurrentWorkflowTaskExecutions: 64, maxCachedWorkflows: 2000 }),
    await Worker.create({ connection: native, taskQueue: `${queue}-lean`, activities: lean, maxConcurrentActivityTaskExecutions: 64 }),
  ];
  const work = fn();
  const [result] = await Promise.all([work, ...workers.map((w) => w.runUntil(work.catch(() => undefined)))]);
  return result as T;
}

function items(n: number): BenchmarkItem[] {
  return Array.from({ length: n }, (_, i) => ({ id: `Bench.item_${i}`, informal: `If p is a prime number larger than ${i} then p is at least 2.`, goldPremises: ['Nat.Prime'], tags: { split: 'bench' } }));
}

function spec(window: number, cells: number): SweepSpec {
  return {
    benchmarks: [],
    library: 'mini',
    samples: 1,
    window,
    maxAttempts: 2,
    leaveOut: 'item',
    configurations: Array.from({ length: cells }, (_, i) => ({ name: `c${i}`, config: { repairRounds: 0 } })),
  };
}

interface SweepTiming {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  serverCpuSeconds: number;
  workerCpuSeconds: number;
}

async function timeSweep(id: string, window: number, itemCount: number, cells: number, historyLimit?: number): Promise<SweepTiming> {
  const queue = `bench-${id}`;
  const sweepActs = createSweepActivities({ results });
  return withWorkers(queue, { ...instantMain, ...sweepActs }, instantLean, async () => {
    const cpu0 = cpuSeconds(server.process.pid!);
    const self0 = selfCpu();
    const t0 = performance.now();
    await startSweep(client, results, spec(window, cells), items(itemCount), { id, taskQueue: `${queue}-main`, leanTaskQueue: `${queue}-lean`, ...(historyLimit ? { historyLimit } : {}) });
    const final = (await client.workflow.getHandle(id).result()) as SweepProgress;
    const seconds = (performance.now() - t0) / 1000;
    if (final.done !== itemCount * cells || final.failed !== 0) throw new Error(`sweep ${id} ended with ${JSON.stringify(final)}`);
    return {
      runs: final.done,
      seconds: +seconds.toFixed(2),
      runsPerSecond: +(final.done / seconds).toFixed(2),
      serverCpuSeconds: +(cpuSeconds(server.process.pid!) - cpu0).toFixed(2),
      workerCpuSeconds: +(selfCpu() - self0).toFixed(2),
    };
  });
}

// 1. Throughput by window.
const throughput: Record<string, SweepTiming> = {};
for (const [window, n] of [[1, 30], [4, 80], [16, 160]] as const) {
  log(`throughput: window ${window}, ${n * 2} runs …`);
  throughput[`window${window}`] = await timeSweep(`tp-${window}`, window, n, 2);
}

// 2. Overhead per activity: the real activities over the fakes, in process vs durable.
const llm = await startFakeOpenAI();
const repl = fakeRepl({});
const lean = createLeanRunner({ replCmd: repl.command, header: 'import Mathlib', timeoutMs: 20_000 });
const indexes = new IndexRegistry({ libraries: [{ name: 'mini', corpusPath: CORPUS }], dir: join(dir, 'indexes') });
const realMain = createActivities({
  llm: createLlmClient({ baseURL: llm.url, apiKey: 'k', models: { decomposer: FAKE_MODELS.decomposer, formalizer: FAKE_MODELS.formalizer, judge: FAKE_MODELS.judge }, timeoutMs: 10_000, maxReasks: 2 }),
  indexes,
});
const realLean = createLeanActivities({ lean, timeoutMs: 20_000, names: new NameDirectory([{ name: 'mini', corpusPath: CORPUS }]) });
const STATEMENT = 'If p is a prime number then p is at least 2.';

async function inProcess(): Promise<number> {
  const subqueries = await realMain.decompose({ statement: STATEMENT });
  const { premises } = await realMain.retrieve({ library: 'mini', statement: STATEMENT, subqueries, mode: 'drift', topK: 5, exclude: [], gold: [] });
  const examples = await realMain.illustrate({ library: 'mini', statement: STATEMENT, premises: premises.map((p) => p.name), m: 3, exclude: [] });
  const formal = await realMain.draftStatement({ statement: STATEMENT, premises, examples });
  const compiled = await realLean.compile({ code: formal });
  await realMain.judge({ statement: STATEMENT, formalStatement: formal, compiled: compiled.status === 'ok', checked: true });
  return 6;
}
const N = 30;
for (let i = 0; i < 3; i++) await inProcess(); // warm: index opened, REPL header imported
let t = performance.now();
for (let i = 0; i < N; i++) await inProcess();
const inProcessMs = (performance.now() - t) / N;
const overhead = await withWorkers('bench-overhead', realMain, realLean, async () => {
  const run = async (i: number) => {
    const id = await startFormalization(client, { statement: STATEMENT, library: 'mini', config: {}, leanTaskQueue: 'bench-overhead-lean', id: `overhead-${i}` }, 'bench-overhead-main');
    return (await client.workflow.getHandle(id).result()) as FormalizeResult;
  };
  for (let i = 0; i < 3; i++) await run(-1 - i);
  const t1 = performance.now();
  let activities = 0;
  for (let i = 0; i < N; i++) {
    const r = await run(i);
    activities = r.stages.filter((s) => s !== 'starting' && s !== 'done').length;
  }
  const durableMs = (performance.now() - t1) / N;
  return { activitiesPerRun: activities, inProcessMsPerRun: +inProcessMs.toFixed(2), durableMsPerRun: +durableMs.toFixed(2), overheadMsPerActivity: +((durableMs - inProcessMs) / activities).toFixed(2) };
});
await lean.close();
await llm.close();
repl.cleanup();
await indexes.close();

// 3. A large sweep: completes, and the parent's history stays bounded by continueAsNew.
let big: (SweepTiming & { parentRuns: number; largestParentHistory: number }) | undefined;
if (bigRuns > 0) {
  log(`large sweep: ${bigRuns} runs, window 16 …`);
  const timing = await timeSweep('big', 16, Math.ceil(bigRuns / 2), 2);
  let parentRuns = 0;
  let largest = 0;
  for await (const wf of client.workflow.list({ query: `WorkflowId = 'big'` })) {
    parentRuns++;
    const d = await client.workflow.getHandle('big', wf.runId).describe();
    largest = Math.max(largest, d.historyLength);
  }
  big = { ...timing, parentRuns, largestParentHistory: largest };
}

const report = {
  throughput,
  overhead,
  ...(big ? { bigSweep: big } : {}),
  targets: { runsPerSecondAtWindow16: 10, overheadMsPerActivity: 10 },
  protocol: 'file-backed temporal dev server, in-process workers (64 activity slots), SQLite results; throughput and the large sweep with instant in-process activities, 2 configurations; overhead with the real activities over the fake LLM server and fake REPL, 30 sequential runs after 3 warm-up runs',
};
if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else {
  const row = (name: string, t: SweepTiming) => `${name.padEnd(10)} ${String(t.runs).padStart(6)} runs  ${t.seconds.toFixed(1).padStart(7)} s  ${t.runsPerSecond.toFixed(1).padStart(6)} runs/s   CPU: server ${t.serverCpuSeconds} s, workers ${t.workerCpuSeconds} s`;
  console.log('sweep throughput (instant fakes):');
  for (const [name, t] of Object.entries(throughput)) console.log(`  ${row(name, t)}`);
  console.log(`orchestration overhead: ${overhead.durableMsPerRun} ms per durable run vs ${overhead.inProcessMsPerRun} ms in process, ${overhead.activitiesPerRun} activities: ${overhead.overheadMsPerActivity} ms per activity (target ≤ 10)`);
  if (big) console.log(`  ${row('large', big)}; parent runs ${big.parentRuns}, largest parent history ${big.largestParentHistory} events`);
}
await results.close();
await connection.close();
await native.close();
await server.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
