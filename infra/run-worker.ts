// Runs one worker process: the main queue (with every LLM provider's queue), the Lean queue,
// the LLM queues alone, or all of them.
import { join } from 'node:path';
import { Runtime } from '@temporalio/worker';
import { createLogger, workerLogger } from './logging';
import { createActivities, createLeanActivities } from '../activities';
import { createSweepActivities } from '../activities/sweep';
import { createLlmBatchActivities } from '../activities/llm-batch';
import { LLM_BATCH_TASK_QUEUE } from '../common/llm-batch';
import { openResults } from './results';
import type { Config } from './config';
import { connectWorker } from './connect';
import { buildLeanDeps, buildMainWorkerDeps, leanWorkerConcurrency, probeAndRecordProviders } from './deps';
import { createLeanWorker, createLlmWorker, createMainWorker } from './workers';
import { queueRequestsPerSecond } from './config';
import { recordServedLibraries } from '../client/stack-libraries';
import { quotaGauges, quotaSnapshots, reportQuota } from './llm-quota';
import { leanIntegrityRecorder } from './lean-integrity';
import { leanIntegrityFile } from '../engines/lean/integrity-status-file';

export type QueueChoice = 'main' | 'lean' | 'llm' | 'all';

export async function runWorkers(config: Config, queue: QueueChoice): Promise<void> {
  // Worker chatter (bundling, state changes) at INFO drowns the stack's own output.
  Runtime.install({
    // Failures' stack traces go to the data directory, one line each to the terminal.
    logger: workerLogger(join(config.dataDir, 'worker.log')),
    // Schedule-to-start latency and slot use per task queue: what tells a deployment it needs
    // more workers of a kind (infra/DEPLOY.md).
    ...(config.temporal.workerMetricsAddress
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: config.temporal.workerMetricsAddress } } } }
      : {}),
  });
  // The Lean REPL's sandbox is set up (and probed) before anything else: a Lean worker that
  // cannot isolate the REPL refuses to start, saying why (SandboxUnavailableError).
  const leanLog = queue === 'lean' || queue === 'all' ? createLogger('driftline-lean') : undefined;
  // Each REPL tampering and each parse error Lean reports on a text the screen accepted is a
  // hole found: counted on the worker's /metrics (with the address set) and in the data
  // directory for the API's /readyz, beside the pool's warning.
  const leanDeps = leanLog
    ? buildLeanDeps(
        config,
        leanLog,
        leanIntegrityRecorder({ meter: Runtime.instance().metricMeter, statusFile: leanIntegrityFile(config.dataDir), log: leanLog }),
      )
    : undefined;
  const connection = await connectWorker(config).catch(async (err: unknown) => {
    await leanDeps?.lean.close();
    throw err;
  });
  const namespace = config.temporal.namespace;
  const runs: Promise<void>[] = [];
  const closers: (() => Promise<void>)[] = [];
  if (queue === 'main' || queue === 'llm' || queue === 'all') {
    // The configured embedder and the default re-ranking: what `driftline eval retrieval` measures.
    const quotaLog = createLogger('driftline-llm-quota');
    const deps = await buildMainWorkerDeps(config, createLogger('driftline-main'), (event) => {
      if (event.kind === 'throttled') quotaLog.warn(event, 'LLM provider answered 429: its shared budget slows down');
      else if (event.waitedMs >= 1000) quotaLog.debug(event, 'LLM request waited for the shared budget');
    });
    // The quota as the whole deployment uses it: gauges on /metrics (with the address set), and a
    // log line every half minute while requests flow.
    // One results handle: the quota reads it, and the main worker's sweeps write to it.
    const results = await openResults(config);
    closers.push(() => results.close());
    const stopQuota = reportQuota({
      read: () => quotaSnapshots(config, results),
      log: quotaLog,
      ...(config.temporal.workerMetricsAddress ? { gauges: quotaGauges(Runtime.instance().metricMeter) } : {}),
    });
    closers.push(async () => stopQuota());
    closers.push(() => deps.indexes.close());
    closers.push(() => deps.close());
    const activities = createActivities(deps);
    if (queue !== 'llm') {
      // Sweeps write their results here (the sweep workflow runs on the main queue).
      const worker = await createMainWorker({
        connection,
        namespace,
        activities: { ...activities, ...createSweepActivities({ results }), ...createLlmBatchActivities(deps.batch) },
        ...(config.temporal.workflowBundle ? { workflowBundle: { codePath: config.temporal.workflowBundle } } : {}),
      });
      runs.push(worker.run());
      // What it serves, where a client sharing the data directory reads it (the CLI checks a
      // run's library against the stack's, not its own shell's: client/stack-libraries.ts).
      recordServedLibraries(
        config.dataDir,
        config.libraries.map((l) => l.name),
      );
    }
    // One worker per provider on its own queue: the provider's rate limit is the queue's, which
    // the Temporal server enforces across every process that polls it.
    for (const [provider, settings] of Object.entries(config.llm.providers)) {
      const worker = await createLlmWorker({
        connection,
        namespace,
        activities,
        provider,
        ...(queueRequestsPerSecond(settings) !== undefined ? { requestsPerSecond: queueRequestsPerSecond(settings)! } : {}),
      });
      runs.push(worker.run());
    }
    // Batch-mode runs' LLM calls mostly wait for their batch: many slots, no provider rate limit
    // (the batch requests take none of the synchronous quota; a fallback sent one at a time
    // still passes the shared budget).
    // Served only with a batch-capable provider: `sweep start --batch` asks whether it is.
    if (Object.values(config.llm.providers).some((p) => p.batch)) {
      const batchWorker = await createLlmWorker({
        connection,
        namespace,
        activities,
        provider: 'batch',
        taskQueue: LLM_BATCH_TASK_QUEUE,
        maxConcurrentActivityTaskExecutions: config.llm.batchSlots,
      });
      runs.push(batchWorker.run());
    }
    // Which structured-output mode each provider takes, learnt once now rather than from the
    // first refused request; calls that need it meanwhile wait for the answer.
    const llmLog = createLogger('driftline-llm');
    void probeAndRecordProviders(config, deps.llm).then(
      (statuses) => {
        for (const [provider, status] of Object.entries(statuses)) {
          llmLog.info(
            { provider, baseURL: status.baseURL, structuredOutput: status.structuredOutput, source: status.source, detail: status.detail },
            'LLM structured-output mode',
          );
        }
      },
      (err: unknown) => llmLog.warn({ err }, 'could not record the LLM providers for /readyz'),
    );
  }
  if (leanDeps && leanLog) {
    const deps = leanDeps;
    const log = leanLog;
    closers.push(() => deps.lean.close());
    const worker = await createLeanWorker({
      connection,
      namespace,
      activities: createLeanActivities(deps),
      concurrency: leanWorkerConcurrency(config),
    });
    // Pre-warm every REPL process with the library header while the worker starts polling;
    // a failure here is logged, and the first check reports it properly.
    void deps.lean.warm?.().catch((err: Error) => log.warn({ err: err.message }, 'Lean pool warm-up failed'));
    runs.push(worker.run());
  }
  // Started by `npm start`: leave when the supervisor is gone, instead of polling forever.
  const parent = process.ppid;
  const watch = process.env.DRIFTLINE_SUPERVISED
    ? setInterval(() => process.ppid !== parent && Runtime.instance().shutdown(), 1000)
    : undefined;
  try {
    await Promise.all(runs);
  } finally {
    if (watch) clearInterval(watch);
    for (const close of closers) await close();
    await connection.close();
  }
}
