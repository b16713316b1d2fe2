// The LLM quota at work: a batch of runs (formalize, compile, judge: two LLM calls each, as a
// sweep's window) through a Temporal dev server and real worker processes, against the fake
// OpenAI server in a process of its own enforcing an account's limits (429s, OpenAI's headers,
// latency growing with the tokens generated). Three cases: tokens per minute binds (requests per
// minute does not), then the reverse, then a local server of four slots; each with one and with
// three main worker processes sharing the provider's budget (the results database). For each: the
// binding limit's achieved rate as a fraction of the limit over the steady part (from 15 s after
// the first reply to the time 90% of the work was served: the start's burst and the tail's
// emptying queue left out), the share of requests answered 429 and the failed runs; measured at
// the fake, which is what a provider bills.
//
//   npx tsx bench/llm-quota.bench.ts [--json] [--case tpm|rpm|slots] [--workers 1|3]
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../infra/temporal-connection';
import { startFormalization } from '../client/runs';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE } from '../common/activities';
import type { RunConfig } from '../common/run-config-schema';
import { loadConfig, runLlmSettings } from '../infra/config';
import { openResults } from '../infra/results';
import { formatQuota, quotaSnapshots } from '../infra/llm-quota';
import { writeWorkflowBundle } from '../infra/workers';
import type { FakeLimits, QuotaRecord } from '../test/fakes/openai-server';
import { fakeRepl } from '../test/fakes/fake-repl-harness';
import { requireTemporalCli } from '../infra/temporal-cli';
import { startDevServer } from '../infra/temporal-server';
import { FIXTURE_LIBRARY } from '../test/helpers/stack';
import { freePort, prebuildIndex, spawnWorker, waitForWorkers, workerEnv, type WorkerProcess } from '../test/helpers/worker-processes';
import type { QuotaSnapshot } from '../engines/llm/budget';

const args = process.argv.slice(2);
const json = args.includes('--json');
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const CONFIG: Partial<RunConfig> = { retrieval: 'none', decompose: false, illustrate: false, repairRounds: 0, judge: true };
/** From the first reply, what is left out of the steady part (the budget's first burst). */
const WARM_MS = 15_000;

interface Case {
  name: 'tpm' | 'rpm' | 'slots';
  binding: 'tokens' | 'requests' | 'slots';
  runs: number;
  /** The account (the fake enforces it) … */
  fake: FakeLimits;
  /** … and driftline's settings for it. */
  env: Record<string, string>;
  limit: number;
}

const LATENCY = { firstTokenMs: 200, msPerToken: 10 };
const CASES: Case[] = [
  {
    name: 'tpm',
    binding: 'tokens',
    runs: 70,
    fake: { tokensPerMinute: 60_000, requestsPerMinute: 600, ...LATENCY },
    env: { DRIFTLINE_LLM_TOKENS_PER_MINUTE: '60000', DRIFTLINE_LLM_REQUESTS_PER_MINUTE: '600' },
    limit: 60_000,
  },
  {
    name: 'rpm',
    binding: 'requests',
    runs: 45,
    fake: { tokensPerMinute: 600_000, requestsPerMinute: 120, ...LATENCY },
    env: { DRIFTLINE_LLM_TOKENS_PER_MINUTE: '600000', DRIFTLINE_LLM_REQUESTS_PER_MINUTE: '120' },
    limit: 120,
  },
  {
    name: 'slots',
    binding: 'slots',
    runs: 60,
    fake: { slots: 4, firstTokenMs: 600, msPerToken: 20 },
    env: { DRIFTLINE_LLM_MAX_IN_FLIGHT: '4' },
    limit: 4,
  },
];

interface Outcome {
  case: Case['name'];
  binding: Case['binding'];
  mainWorkers: number;
  limit: number;
  runs: number;
  failedRuns: number;
  requests: number;
  share429: number;
  seconds: number;
  steadySeconds: number;
  /** The binding limit's use over the steady part, as a fraction of the limit. */
  achieved: number;
  /** driftline's own view at the end (sweep status, the logs). */
  quota: string[];
}

/** The fake in its own process (its timestamps are not held up by this busy event loop). */
async function startFake(limits: FakeLimits): Promise<{ url: string; child: ChildProcess; log(): Promise<QuotaRecord[]> }> {
  const child = fork(fileURLToPath(new URL('../test/fakes/openai-server-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FAKE_LIMITS: JSON.stringify(limits) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the fake exited (${code})`)));
  });
  const log = () =>
    new Promise<QuotaRecord[]>((resolve) => {
      const on = (m: unknown) => {
        if (typeof m === 'object' && m !== null && 'quota' in m) {
          child.off('message', on);
          resolve((m as { quota: QuotaRecord[] }).quota);
        }
      };
      child.on('message', on);
      child.send('quota');
    });
  return { url, child, log };
}

/** The binding limit's use over [from, to): tokens or requests per minute served, or mean slots
 * busy. */
function use(c: Case, log: QuotaRecord[], from: number, to: number): number {
  const ok = log.filter((r) => r.status === 200);
  if (c.binding === 'slots') {
    const busy = ok.reduce((n, r) => n + Math.max(0, Math.min(r.doneAt, to) - Math.max(r.arrivedAt, from)), 0);
    return busy / (to - from);
  }
  const inside = ok.filter((r) => r.doneAt >= from && r.doneAt < to);
  const amount = c.binding === 'tokens' ? inside.reduce((n, r) => n + r.tokens, 0) : inside.length;
  return (amount * 60_000) / (to - from);
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

const cases = CASES.filter((c) => !option('case') || c.name === option('case'));
const workerCounts = option('workers') ? [Number(option('workers'))] : [1, 3];
const root = mkdtempSync(join(tmpdir(), 'driftline-bench-quota-'));
const server = await startDevServer({
  cli: requireTemporalCli(),
  port: await freePort(),
  uiPort: await freePort(),
  dbFile: join(root, 'temporal.db'),
  namespace: 'default',
  logFile: join(root, 'temporal.log'),
});
const connection = await connectTemporal({ address: server.address });
const client = new Client({ connection, namespace: 'default' });
const repl = fakeRepl({ headerDelayMs: 50, bodyDelayMs: 20 });
const bundle = await writeWorkflowBundle(join(root, 'workflows.js'));
const outcomes: Outcome[] = [];

async function runCase(c: Case, mainWorkers: number): Promise<Outcome> {
  const dataDir = mkdtempSync(join(root, `${c.name}-${mainWorkers}-`));
  const fake = await startFake(c.fake);
  const workers: WorkerProcess[] = [];
  try {
    const env = {
      ...workerEnv({
        temporalAddress: server.address,
        dataDir,
        llmUrl: fake.url,
        replCmd: repl.command,
        replSandboxEnv: repl.sandboxEnv,
        leanPoolSize: 2,
      }),
      DRIFTLINE_WORKFLOW_BUNDLE: bundle,
      DRIFTLINE_MAX_TOKENS_FORMALIZER: '512',
      DRIFTLINE_MAX_TOKENS_JUDGE: '256',
      DRIFTLINE_LLM_STRUCTURED_OUTPUT: 'json_schema',
      ...c.env,
    };
    await prebuildIndex(env);
    for (let i = 0; i < mainWorkers; i++) workers.push(await spawnWorker('main', env));
    workers.push(await spawnWorker('lean', env));
    await waitForWorkers(client, 'default', workers, { main: MAIN_TASK_QUEUE, lean: LEAN_TASK_QUEUE });
    const config = loadConfig({ env });
    const started = Date.now();
    const ids = await Promise.all(
      Array.from({ length: c.runs }, (_, i) =>
        startFormalization(client, {
          statement: `Statement ${c.name}-${mainWorkers}-${i}: for every natural number n, n + ${i} is at least ${i}.`,
          library: FIXTURE_LIBRARY,
          config: CONFIG,
          llm: runLlmSettings(config),
          id: `bench-quota/${c.name}/${mainWorkers}/${i}`,
        }),
      ),
    );
    const settled = await Promise.allSettled(ids.map((id) => client.workflow.getHandle(id).result()));
    const seconds = (Date.now() - started) / 1000;
    const log = await fake.log();
    const served = log.filter((r) => r.status === 200).sort((a, b) => a.doneAt - b.doneAt);
    const from = served[0]!.doneAt + WARM_MS;
    // The steady part ends when 90% of the work (tokens, requests, slot time) was served.
    const weight = (r: QuotaRecord) => (c.binding === 'tokens' ? r.tokens : c.binding === 'requests' ? 1 : r.doneAt - r.arrivedAt);
    const total = served.reduce((n, r) => n + weight(r), 0);
    let acc = 0;
    const to = served.find((r) => (acc += weight(r)) >= 0.9 * total)!.doneAt;
    const results = await openResults(config);
    let quota: QuotaSnapshot[] = [];
    try {
      quota = await quotaSnapshots(config, results);
    } finally {
      await results.close();
    }
    return {
      case: c.name,
      binding: c.binding,
      mainWorkers,
      limit: c.limit,
      runs: c.runs,
      failedRuns: settled.filter((s) => s.status === 'rejected').length,
      requests: log.length,
      share429: round(log.filter((r) => r.status === 429).length / Math.max(1, log.length), 3),
      seconds: round(seconds, 1),
      steadySeconds: round((to - from) / 1000, 1),
      achieved: to > from ? round(use(c, log, from, to) / c.limit, 3) : Number.NaN,
      quota: quota.map(formatQuota),
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    fake.child.disconnect();
  }
}

try {
  for (const c of cases) for (const n of workerCounts) outcomes.push(await runCase(c, n));
  if (json) {
    process.stdout.write(`${JSON.stringify({ latency: LATENCY, warmMs: WARM_MS, outcomes })}\n`);
  } else {
    console.log('case  | binding  | main workers | runs | failed | requests | 429s  | seconds | steady s | achieved / limit');
    console.log('------|----------|--------------|------|--------|----------|-------|---------|----------|-----------------');
    for (const o of outcomes) {
      console.log(
        `${o.case.padEnd(5)} | ${o.binding.padEnd(8)} | ${String(o.mainWorkers).padStart(12)} | ${String(o.runs).padStart(4)} | ${String(o.failedRuns).padStart(6)} | ${String(o.requests).padStart(8)} | ${(o.share429 * 100).toFixed(1).padStart(4)}% | ${String(o.seconds).padStart(7)} | ${String(o.steadySeconds).padStart(8)} | ${o.achieved} of ${o.limit}`,
      );
    }
    for (const o of outcomes) for (const line of o.quota) console.log(`${o.case}, ${o.mainWorkers} main: ${line}`);
  }
} finally {
  repl.cleanup();
  await connection.close();
  await server.stop();
  rmSync(root, { recursive: true, force: true });
}
