// Batch mode (issue 37) against the fake provider's Batch API, with the real worker process
// (`driftline worker --queue all`) and a file-backed Temporal dev server, on a sweep of ITEMS
// items × 2 configurations (drift with one repair round and the judge; bare: formalize only):
//  1. the batches' shape: requests per batch and batches per sweep;
//  2. the sweep's wall time against the fake's batch delay (--delays, default 0.5 s, 2 s, 5 s);
//  3. the orchestration cost per run, batch mode against synchronous mode, back to back in the
//     same run with no LLM latency (the fake answers at once, its batches take 0 ms): CPU ms of
//     the worker process and of the dev server per run, and the sweep's wall time, as ratios.
// The batcher's settings are the same for every sweep (BATCH_SETTINGS); the reply cache is off,
// so every sweep asks the provider.
//
//   npx tsx bench/llm-batch.bench.ts [--json] [--items 100] [--delays 500,2000,5000] [--pairs 1]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../infra/temporal-connection';
import { startDevServer } from '../infra/temporal-server';
import { requireTemporalCli } from '../infra/temporal-cli';
import { startSweep } from '../client/sweeps';
import type { SweepProgress } from '../common/sweep';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE } from '../common/activities';
import { ResultsDb, resultsLocation } from '../engines/results/results-db';
import { loadBenchmarks } from '../engines/benchmarks/load';
import type { SweepSpec } from '../engines/sweeps/sweep-file';
import { defaultBrain, startFakeOpenAI } from '../test/fakes/openai-server';
import { fakeRepl } from '../test/fakes/fake-repl-harness';
import { FIXTURE_LIBRARY } from '../test/helpers/stack';
import { freePort, pollers, workerEnv } from '../test/helpers/worker-processes';
import { EVEN_FAILS, writeThreeKindBenchmark } from '../test/helpers/fake-benchmark';

const args = process.argv.slice(2);
const json = args.includes('--json');
const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const ITEMS = Number(flag('--items') ?? 100);
const DELAYS = (flag('--delays') ?? '500,2000,5000').split(',').map(Number);
const PAIRS = Number(flag('--pairs') ?? 1);
const WINDOW = 100;
/** The batcher's settings for every sweep: a batch is sent after 1 s, looked at every 300 ms, and a
 * waiting call reads the results database every 250 ms. */
const BATCH_SETTINGS = {
  DRIFTLINE_LLM_BATCH_MAX_AGE_MS: '1000',
  DRIFTLINE_LLM_BATCH_POLL_MS: '300',
  DRIFTLINE_LLM_BATCH_READ_MS: '250',
  DRIFTLINE_LLM_BATCH_IDLE_MS: '5000',
};
const CLI = fileURLToPath(new URL('../bin/cli.ts', import.meta.url));
const log = (msg: string) => !json && process.stderr.write(`${msg}\n`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU ms (user + system) a process has used so far, from /proc. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of the whole line (utime, stime) are 12 and 13 after the command's name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

const dir = mkdtempSync(join(tmpdir(), 'driftline-bench-batch-'));
const machineAtStart = { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg().map((l) => round(l)) };
const llm = await startFakeOpenAI({ handler: defaultBrain, batches: { delayMs: 0 } });
const repl = fakeRepl(EVEN_FAILS);
const server = await startDevServer({
  cli: requireTemporalCli(),
  port: await freePort(),
  uiPort: await freePort(),
  dbFile: join(dir, 'temporal.db'),
  namespace: 'default',
  logFile: join(dir, 'temporal.log'),
});
const connection = await connectTemporal({ address: server.address });
const client = new Client({ connection });
const results = await ResultsDb.open(resultsLocation(join(dir, 'data')));
const worker = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--queue', 'all'], {
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
    ...BATCH_SETTINGS,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});

function spec(benchmark: string, batch: boolean): SweepSpec {
  return {
    benchmarks: [{ path: benchmark, format: 'rautoformalizer' }],
    library: FIXTURE_LIBRARY,
    samples: 1,
    window: WINDOW,
    maxAttempts: 2,
    leaveOut: 'item',
    configurations: [
      { name: 'drift', config: { repairRounds: 1, cache: false } },
      { name: 'bare', config: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false, cache: false } },
    ],
    ...(batch ? { llm: { batch: true } } : {}),
  };
}

interface Measured {
  sweep: string;
  mode: 'batch' | 'synchronous';
  batchDelayMs: number | null;
  runs: number;
  wallS: number;
  workerCpuMsPerRun: number;
  serverCpuMsPerRun: number;
  llmRequests: number;
  batches: number;
  requestsPerBatch: { mean: number; min: number; max: number } | null;
  loadavg1: number;
}

let sweeps = 0;
async function measure(benchmark: string, batch: boolean, batchDelayMs: number | null, items = ITEMS): Promise<Measured> {
  const id = `${batch ? 'batch' : 'sync'}-${++sweeps}`;
  const all = await loadBenchmarks(spec(benchmark, batch).benchmarks);
  if (batchDelayMs !== null) llm.batches.setDelay(batchDelayMs);
  const before = {
    worker: cpuMs(worker.pid!),
    server: cpuMs(server.process.pid!),
    requests: llm.requests.length,
    stats: llm.batches.stats(),
  };
  const t0 = performance.now();
  const started = await startSweep(client, results, spec(benchmark, batch), all.slice(0, items), { id });
  const progress = (await client.workflow.getHandle(id).result()) as SweepProgress;
  const wallS = (performance.now() - t0) / 1000;
  if (progress.status !== 'completed' || progress.failed > 0)
    throw new Error(`sweep ${id} ended ${progress.status} with ${progress.failed} failed`);
  const lines = llm.batches.stats().linesPerBatch.slice(before.stats.linesPerBatch.length);
  const runs = started.total;
  const m: Measured = {
    sweep: id,
    mode: batch ? 'batch' : 'synchronous',
    batchDelayMs: batch ? batchDelayMs : null,
    runs,
    wallS: round(wallS),
    workerCpuMsPerRun: round((cpuMs(worker.pid!) - before.worker) / runs),
    serverCpuMsPerRun: round((cpuMs(server.process.pid!) - before.server) / runs),
    llmRequests: llm.requests.length - before.requests,
    batches: lines.length,
    requestsPerBatch: lines.length
      ? { mean: round(lines.reduce((a, n) => a + n, 0) / lines.length, 1), min: Math.min(...lines), max: Math.max(...lines) }
      : null,
    loadavg1: round(loadavg()[0]!),
  };
  log(`  ${JSON.stringify(m)}`);
  return m;
}

try {
  const benchmark = join(dir, 'bench.dev.jsonl');
  writeThreeKindBenchmark(benchmark, { items: ITEMS, prefix: 'Bench' });
  // The worker polls both queues before anything is measured.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [main, lean] = await Promise.all([
      pollers(client, 'default', MAIN_TASK_QUEUE, 'workflow'),
      pollers(client, 'default', LEAN_TASK_QUEUE, 'activity'),
    ]);
    if (main.some((p) => p.startsWith(`${worker.pid}@`)) && lean.some((p) => p.startsWith(`${worker.pid}@`))) break;
    if (worker.exitCode !== null || Date.now() > deadline) throw new Error('the worker did not start polling');
    await new Promise((r) => setTimeout(r, 250));
  }
  log('warming up (a small sweep in each mode)');
  await measure(benchmark, false, null, 6);
  await measure(benchmark, true, 0, 6);

  log(`orchestration: ${PAIRS} pair(s) of ${ITEMS * 2}-run sweeps, synchronous then batch, no LLM latency`);
  const pairs: Array<{ synchronous: Measured; batch: Measured }> = [];
  for (let i = 0; i < PAIRS; i++)
    pairs.push({ synchronous: await measure(benchmark, false, null), batch: await measure(benchmark, true, 0) });

  log(`wall time against the batch delay: ${DELAYS.join(', ')} ms`);
  const byDelay: Measured[] = [];
  for (const d of DELAYS) byDelay.push(await measure(benchmark, true, d));

  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const ratios = {
    workerCpuPerRun: round(mean(pairs.map((p) => p.batch.workerCpuMsPerRun)) / mean(pairs.map((p) => p.synchronous.workerCpuMsPerRun))),
    serverCpuPerRun: round(mean(pairs.map((p) => p.batch.serverCpuMsPerRun)) / mean(pairs.map((p) => p.synchronous.serverCpuMsPerRun))),
    wall: round(mean(pairs.map((p) => p.batch.wallS)) / mean(pairs.map((p) => p.synchronous.wallS))),
  };
  const report = {
    machine: { ...machineAtStart, loadavgAtEnd: loadavg().map((l) => round(l)) },
    items: ITEMS,
    configurations: ['drift (repairRounds 1, judge)', 'bare (formalize only)'],
    window: WINDOW,
    batchSettings: BATCH_SETTINGS,
    pairs,
    ratiosBatchOverSynchronous: ratios,
    byDelay,
  };
  if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else {
    console.log(`${ITEMS} items × 2 configurations, window ${WINDOW}; batcher ${JSON.stringify(BATCH_SETTINGS)}`);
    console.log(`machine: ${machineAtStart.cpus} × ${machineAtStart.model}; load average at start ${machineAtStart.loadavg.join(' ')}`);
    console.log(
      '\nmode        | batch delay | runs | wall s | worker CPU ms/run | server CPU ms/run | LLM requests | batches | requests/batch (mean, min–max)',
    );
    console.log(
      '------------|-------------|------|--------|-------------------|-------------------|--------------|---------|------------------------------',
    );
    for (const m of [...pairs.flatMap((p) => [p.synchronous, p.batch]), ...byDelay]) {
      const per = m.requestsPerBatch ? `${m.requestsPerBatch.mean} (${m.requestsPerBatch.min}–${m.requestsPerBatch.max})` : '–';
      console.log(
        `${m.mode.padEnd(11)} | ${(m.batchDelayMs === null ? '–' : `${m.batchDelayMs} ms`).padStart(11)} | ${String(m.runs).padStart(4)} | ${String(m.wallS).padStart(6)} | ${String(m.workerCpuMsPerRun).padStart(17)} | ${String(m.serverCpuMsPerRun).padStart(17)} | ${String(m.llmRequests).padStart(12)} | ${String(m.batches).padStart(7)} | ${per}`,
      );
    }
    console.log(
      `\nbatch / synchronous, no LLM latency: worker CPU per run ${ratios.workerCpuPerRun}×, server CPU per run ${ratios.serverCpuPerRun}×, wall ${ratios.wall}×`,
    );
  }
} finally {
  worker.kill('SIGKILL');
  await results.close();
  await connection.close();
  await server.stop();
  await llm.close();
  repl.cleanup();
  rmSync(dir, { recursive: true, force: true });
}
