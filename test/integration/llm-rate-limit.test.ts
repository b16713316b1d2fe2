// One rate limit per provider across all workers: a 50-run sweep against a provider that answers
// 30% of requests 429 with Retry-After finishes with no failed run, and the provider (the fake)
// never sees more than the configured rate. The provider's LLM activities are served by two
// separate worker processes (`driftline worker --queue llm`), so a per-process limit would let
// twice the rate through; the limit is the task queue's, enforced by the Temporal server.
//
// How the server limits (Temporal's matching service, rateLimitManager/TaskMatcher
// UpdateRatelimit): the queue's rate R is split over its read partitions P (default 4), each a
// token bucket of rate R/P and burst max(1, ⌈R/P⌉). So over any window of w seconds the queue
// dispatches at most R·w + B tasks, B = P·max(1, ⌈R/P⌉) (all buckets full after an idle spell).
// Between dispatch and the request reaching the fake lie the worker's poll response, the
// activity's start and the HTTP call, in worker processes that on this machine (2 cores, load
// average ≈ 20 from other jobs) wait for CPU: tasks dispatched over w + J seconds can arrive
// within w seconds, bunched. The bound checked is therefore R·(w + J) + B with J = 2 s (on a
// quiet machine the lag is milliseconds); the measured figures are printed. It still tells one
// limit for the deployment from one per process: two processes limited each to R would send up
// to 2R·w. The fake runs in a process of its own, so its timestamps are not held up by this
// process's event loop (which runs the 50 workflows).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createStack, startTemporal, workflowBundleFile, type TestStack } from '../helpers/stack';
import { FAKE_MODELS } from '../fakes/openai-server';
import { miniSpec, MINI_BENCHMARK, startOnStack } from '../helpers/sweep';
import { pollers, prebuildIndex, spawnWorker, workerEnv, type WorkerProcess } from '../helpers/worker-processes';
import type { SweepProgress } from '../../common/sweep';

/** The provider's limit, requests per second. */
const RATE = 4;
/** Task-queue partitions of the server (matching.numTaskqueueReadPartitions' default). */
const PARTITIONS = 4;
const BURST = PARTITIONS * Math.max(1, Math.ceil(RATE / PARTITIONS));
/** Allowance for the varying delay between dispatch and arrival at the fake, seconds. */
const JITTER_S = 2;
const PROVIDER = 'limited';
const RUNS = 50;

/** The fake in its own process; requests numbered 2, 5, 8 of every ten are refused with 429 and
 * Retry-After: 1 (30%, never twice in a row). */
async function startFakeProcess(): Promise<{ url: string; child: ChildProcess; times(): Promise<number[]> }> {
  const child = fork(fileURLToPath(new URL('../fakes/openai-server-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FAKE_REFUSE_EVERY: '10', FAKE_REFUSE_AT: '2,5,8', FAKE_RETRY_AFTER: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the fake exited (${code})`)));
  });
  const times = () =>
    new Promise<number[]>((resolve) => {
      child.once('message', (m) => resolve((m as { times: number[] }).times));
      child.send('stats');
    });
  return { url, child, times };
}

/** The most arrivals in any window of `ms` that starts at an arrival. */
function maxInWindow(times: number[], ms: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let j = 0;
  for (let i = 0; i < t.length; i++) {
    while (j < t.length && t[j]! < t[i]! + ms) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

let env: TestWorkflowEnvironment;
let fake: Awaited<ReturnType<typeof startFakeProcess>>;
let s: TestStack;
let dataDir: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  env = await startTemporal();
  fake = await startFakeProcess();
  // The stack runs the workflows, retrieval and Lean in this process; its runs send their LLM
  // activities to `llm-limited`, which only the two worker processes poll.
  // No Lean (compile answers `skipped` at once): the provider's queue is the only bottleneck.
  s = await createStack(env, {
    repl: false,
    providers: { queues: [], roles: { decomposer: PROVIDER, formalizer: PROVIDER, judge: PROVIDER } },
  });
  dataDir = mkdtempSync(join(tmpdir(), 'driftline-rate-'));
  const envOf = workerEnv({ temporalAddress: env.address, dataDir, llmUrl: '', replCmd: 'true' });
  const workerEnvironment: NodeJS.ProcessEnv = {
    ...envOf,
    OPENAI_BASE_URL: '',
    DRIFTLINE_WORKFLOW_BUNDLE: await workflowBundleFile(dataDir),
    DRIFTLINE_PROVIDERS: JSON.stringify({
      [PROVIDER]: { baseURL: fake.url, apiKey: 'test-key', requestsPerSecond: RATE, structuredOutput: 'json_schema' },
    }),
    DRIFTLINE_ROLE_DECOMPOSER: `${PROVIDER}:${FAKE_MODELS.decomposer}`,
    DRIFTLINE_ROLE_FORMALIZER: `${PROVIDER}:${FAKE_MODELS.formalizer}`,
    DRIFTLINE_ROLE_JUDGE: `${PROVIDER}:${FAKE_MODELS.judge}`,
  };
  await prebuildIndex(workerEnvironment);
  workers.push(await spawnWorker('llm', workerEnvironment), await spawnWorker('llm', workerEnvironment));
  // Both processes poll the provider's queue before anything is scheduled there.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ids = await pollers(env.client, 'default', `llm-${PROVIDER}`, 'activity');
    if (workers.every((w) => ids.some((id) => id.startsWith(w.identityPrefix)))) break;
    const dead = workers.find((w) => w.child.exitCode !== null);
    if (dead) throw new Error(`an LLM worker exited (${dead.child.exitCode}):\n${dead.output()}`);
    if (Date.now() > deadline) throw new Error(`LLM workers not polling:\n${workers.map((w) => w.output()).join('\n')}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}, 240_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await s?.close();
  fake?.child.disconnect();
  await env?.teardown();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('one rate limit per provider across all workers', () => {
  it('a 50-run sweep against a provider refusing 30% with 429 finishes, never above the rate', async () => {
    const spec = miniSpec({
      benchmarks: [{ path: MINI_BENCHMARK, format: 'rautoformalizer', limit: 5 }],
      samples: RUNS / 5,
      window: 25,
      maxAttempts: 1,
      // Small runs: formalize and judge only, every request reaching the provider.
      configurations: [{ name: 'small', config: { retrieval: 'none', repairRounds: 0, cache: false } }],
    });
    const started = await startOnStack(s, spec, { id: 'rate-limited' });
    expect(started.total).toBe(RUNS);
    const final = (await s.withWorkers(() => s.client.workflow.getHandle('rate-limited').result())) as SweepProgress;

    // Finished, every run with an outcome of its own: none failed for the 429s.
    expect(final).toMatchObject({ status: 'completed', total: RUNS, done: RUNS, failed: 0 });
    const runs = await s.results.runs('rate-limited');
    expect(runs).toHaveLength(RUNS);
    expect(runs.filter((r) => r.outcome === 'failed')).toEqual([]);

    const times = await fake.times();
    const refused = Math.round(times.length * 0.3);
    expect(times.length).toBeGreaterThanOrEqual((2 * RUNS) / 0.7 - 1);
    const spanS = (Math.max(...times) - Math.min(...times)) / 1000;
    const windows = [1, 2, 5, 10].map((w) => ({ w, max: maxInWindow(times, w * 1000), bound: Math.floor(RATE * (w + JITTER_S) + BURST) }));
    console.log(
      `rate limit ${RATE}/s, 2 LLM worker processes, ${RUNS} runs: ${times.length} requests (~${refused} answered 429) in ${spanS.toFixed(1)} s ` +
        `(${(times.length / spanS).toFixed(2)}/s); most in any window: ${windows.map((x) => `${x.w} s: ${x.max} (bound ${x.bound})`).join(', ')}`,
    );
    for (const x of windows) expect(x.max, `requests in ${x.w} s`).toBeLessThanOrEqual(x.bound);
    // Well below what one limit per worker process would let through.
    expect(windows.find((x) => x.w === 10)!.max).toBeLessThan(2 * RATE * 10);
    // The whole sweep: the long-run rate is the limit, not twice it (one per process).
    expect(times.length).toBeLessThanOrEqual(RATE * (spanS + JITTER_S) + BURST);

    // Both processes served the provider's activities, and the refused requests were retried.
    const identities = new Set<string>();
    let retried = 0;
    // How long first attempts waited in the provider's queue (the limiter holding them).
    const waits: number[] = [];
    const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
      Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
    for (const r of runs) {
      const scheduledAt = new Map<string, number>();
      for (const e of (await s.client.workflow.getHandle(r.workflowId).fetchHistory()).events ?? []) {
        if (e.activityTaskScheduledEventAttributes?.taskQueue?.name === `llm-${PROVIDER}`)
          scheduledAt.set(String(e.eventId), ms(e.eventTime));
        const started = e.activityTaskStartedEventAttributes;
        if (!started?.identity || !scheduledAt.has(String(started.scheduledEventId))) continue;
        identities.add(started.identity.split('@')[0]!);
        if ((started.attempt ?? 1) > 1) retried++;
        else waits.push(ms(e.eventTime) - scheduledAt.get(String(started.scheduledEventId))!);
      }
    }
    waits.sort((a, b) => a - b);
    console.log(
      `queue wait of first attempts: median ${waits[waits.length >> 1]} ms, max ${waits[waits.length - 1]} ms; ${retried} activities retried after a 429`,
    );
    expect([...identities].sort()).toEqual(workers.map((w) => String(w.pid)).sort());
    expect(retried).toBeGreaterThan(0);
  }, 300_000);
});
