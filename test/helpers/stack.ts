// A whole driftline stack for tests: the real Temporal dev server (the binary `npm run setup`
// installs), the real workers and activities, and protocol-faithful fakes for the LLM and Lean.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, type Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../../infra/temporal-connection';
import { createActivities, createLeanActivities } from '../../activities';
import { createSweepActivities } from '../../activities/sweep';
import { createLlmBatchActivities } from '../../activities/llm-batch';
import { temporalBatchMailbox } from '../../activities/llm-batch-mailbox';
import { LLM_BATCH_TASK_QUEUE, type BatcherSettings } from '../../common/llm-batch';
import { batchFetch } from '../../engines/llm/batch-fetch';
import { BatchApi } from '../../engines/llm/batch-api';
import { SqlBatchStore } from '../../engines/results/llm-batches';
import { ResultsDb, resultsLocation } from '../../engines/results/results-db';
import { createLlmClient, DEFAULT_PROVIDER, type LlmClient, type LlmSettings } from '../../engines/llm/client';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { createLeanRunner } from '../../engines/lean/create-runner';
import type { LeanRunner } from '../../engines/lean/runner-contract';
import { NameDirectory } from '../../engines/lean/name-directory';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../../common/search-attributes';
import { LEAN_TASK_QUEUE, MAIN_TASK_QUEUE, type LeanActivities } from '../../common/activities';
import type { LlmCallPolicy } from '../../common/llm-call-policy';
import type { RunConfig } from '../../common/run-config-schema';
import type { FormalizeResult } from '../../common/run-types';
import { requireTemporalCli } from '../../infra/temporal-cli';
import { DEV_SERVER_TUNING } from '../../infra/temporal-server';
import { createLeanWorker, createLlmWorker, createMainWorker, WORKFLOWS_PATH } from '../../infra/workers';
import { startFormalization } from '../../client/runs';
import { recordServedLibraries } from '../../client/stack-libraries';
import { SqlReplyLedger } from '../../engines/results/llm-ledger';
import { meteredFetch, type ReplyLedger } from '../../engines/llm/metered-fetch';
import type { PriceTable } from '../../engines/llm/usage';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from '../fakes/openai-server';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';
import type { FakeReplScript } from '../fakes/fake-repl-rules';

export const FIXTURE_CORPUS = fileURLToPath(new URL('../fixtures/corpus/mini.jsonl', import.meta.url));
export const FIXTURE_LIBRARY = 'mini';
export const FAKE_TRANSLATOR = 'fake-translator';

let runtimeInstalled = false;
/** The Temporal runtime logs warnings and errors only (not every worker's state changes). */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // already installed by another suite in this process
  }
}

/** A Temporal dev server on a free loopback port, with our search attributes registered. */
export async function startTemporal(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: requireTemporalCli() },
      ip: '127.0.0.1',
      ui: false,
      searchAttributes: ALL_SEARCH_ATTRIBUTE_KEYS,
      // The dispatch settings `npm start` gives its dev server: tests see the server users run.
      extraArgs: DEV_SERVER_TUNING,
    },
  });
  // The environment's client connects with the SDK's default retry interceptor, whose retry timer
  // throws when the connection is closed under a retried call (infra/temporal-connection.ts).
  // Tests use a close-safe connection instead, as the product's entry points do.
  const original = env.connection;
  const connection = await connectTemporal({ address: env.address });
  const client = new Client({ connection, namespace: env.namespace ?? 'default' });
  Object.defineProperty(env, 'connection', { value: connection, writable: true });
  Object.defineProperty(env, 'client', { value: client, writable: true });
  await original.close();
  return env;
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** The workflow bundle, built once per test file. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  return bundle;
}

export function llmSettings(url: string, overrides: Partial<LlmSettings> = {}): LlmSettings {
  return {
    baseURL: url,
    apiKey: 'test-key',
    models: { decomposer: FAKE_MODELS.decomposer, formalizer: FAKE_MODELS.formalizer, judge: FAKE_MODELS.judge, agent: FAKE_MODELS.agent },
    timeoutMs: 10_000,
    maxReasks: 2,
    ...overrides,
  };
}

export interface StackOptions {
  /** The library served (default: the mini fixture corpus). */
  library?: { name: string; corpusPath: string };
  llm?: FakeOpenAIOptions;
  repl?: FakeReplScript | false;
  /** false: no LLM endpoint configured, as on a fresh machine. */
  llmConfigured?: boolean;
  /** true: a translator (the agent's `draft` tool) on the same fake, model `fake-translator`. */
  translator?: boolean;
  /** Overrides of the LLM client's settings (llmSettings). */
  llmSettings?: Partial<LlmSettings>;
  /** true: the LLM client goes through the reply cache and the call ledger, kept in a results
   * database (SQLite) in the stack's data directory, as the main worker's does. */
  ledger?: boolean;
  /** USD per million tokens by model, for the ledger (DRIFTLINE_LLM_PRICES). */
  prices?: PriceTable;
  /** The main worker's LLM client built by the caller (e.g. by infra/deps for a configured
   * provider), handed the stack's ledger with `ledger: true`; the fake is then not used. */
  llmClient?: (ledger?: ReplyLedger) => LlmClient;
  /** Task queue suffix, so suites sharing a server never share workers; `default` uses the
   * production queue names (for code under test that starts runs on them). */
  queue?: string;
  /** LLM provider queues (`llm-<provider>`) served by workers of the stack, each with its rate
   * limit; runs are told `roles` (role → provider) so their LLM activities go there. */
  providers?: { queues: Array<{ provider: string; requestsPerSecond?: number }>; roles: LlmCallPolicy['providers'] };
  /** The main worker's workflow cache; 0: every workflow task replays the whole history. */
  maxCachedWorkflows?: number;
  /** Wraps the Lean worker's activities (a test double of one of them, e.g. `compile`). */
  wrapLean?: (activities: LeanActivities) => LeanActivities;
  /** Batch mode as the main worker serves it (infra/deps.ts): the fake as the batch-capable
   * `default` provider, batchers on the stack's main queue, the batch-mode calls' worker. */
  batch?: { settings?: Partial<BatcherSettings>; readMs?: number };
}

export interface TestStack {
  env: TestWorkflowEnvironment;
  client: Client;
  llm: FakeOpenAI;
  repl?: FakeRepl;
  lean: LeanRunner;
  indexes: IndexRegistry;
  dataDir: string;
  /** The results database (SQLite in dataDir) the sweep activities write to. */
  results: ResultsDb;
  mainQueue: string;
  leanQueue: string;
  /** The LLM settings runs of this stack are started with (sweeps pass them too). */
  runLlm: LlmCallPolicy;
  /** The LLM client the main worker's activities use. */
  llmClient: LlmClient;
  /** The call ledger, with `ledger: true`. */
  ledger?: SqlReplyLedger;
  /** Main and Lean workers (or only one of them), in this process. */
  createWorkers(which?: 'both' | 'main' | 'lean'): Promise<Worker[]>;
  /** Runs `fn` while both workers poll; stops them afterwards. */
  withWorkers<T>(fn: () => Promise<T>): Promise<T>;
  start(
    statement: string,
    config?: Partial<RunConfig>,
    extra?: {
      exclude?: string[];
      leaveOut?: 'item' | 'file';
      goldPremises?: string[];
      goldStatement?: string;
      id?: string;
      sample?: number;
    },
  ): Promise<string>;
  result(id: string): Promise<FormalizeResult>;
  close(): Promise<void>;
}

let queueCounter = 0;

export async function createStack(env: TestWorkflowEnvironment, options: StackOptions = {}): Promise<TestStack> {
  const llm = await startFakeOpenAI(options.llm);
  const repl = options.repl === false ? undefined : fakeRepl(options.repl ?? {});
  const dataDir = mkdtempSync(join(tmpdir(), 'driftline-test-'));
  const lean = createLeanRunner({
    replCmd: repl?.command,
    header: 'import Mathlib',
    timeoutMs: 20_000,
    ...(repl ? { sandbox: repl.sandbox } : {}),
  });
  const library = options.library ?? { name: FIXTURE_LIBRARY, corpusPath: FIXTURE_CORPUS };
  const indexes = new IndexRegistry({ libraries: [library], dir: join(dataDir, 'indexes') });
  // What a main worker records as it starts (infra/run-worker.ts): a CLI sharing the data
  // directory checks a run's library against it.
  recordServedLibraries(dataDir, [library.name]);
  const suffix = options.queue ?? `q${process.pid}-${++queueCounter}`;
  const mainQueue = suffix === 'default' ? MAIN_TASK_QUEUE : `driftline-${suffix}`;
  const leanQueue = suffix === 'default' ? LEAN_TASK_QUEUE : `lean-${suffix}`;
  const settings = llmSettings(llm.url, options.llmSettings);
  const results = await ResultsDb.open(resultsLocation(dataDir));
  const ledger = options.ledger ? new SqlReplyLedger(results.driver) : undefined;
  const batchStore = options.batch ? new SqlBatchStore(results.driver) : undefined;
  const batched = batchStore
    ? batchFetch({
        provider: DEFAULT_PROVIDER,
        mailbox: temporalBatchMailbox(
          batchStore,
          async () => env.client,
          { maxRequests: 100, maxAgeMs: 200, pollMs: 100, idleMs: 1000, ...options.batch!.settings },
          mainQueue,
        ),
        pollMs: options.batch!.readMs ?? 50,
        callTimeoutMs: settings.timeoutMs,
      })
    : undefined;
  const llmClient = options.llmClient
    ? options.llmClient(ledger)
    : createLlmClient(
        options.llmConfigured === false
          ? null
          : {
              ...settings,
              ...(ledger
                ? {
                    fetch: meteredFetch({
                      provider: llm.url,
                      ledger,
                      ...(options.prices ? { prices: options.prices } : {}),
                      ...(batched ? { fetch: batched } : {}),
                    }),
                  }
                : batched
                  ? { fetch: batched }
                  : {}),
            },
      );
  const runSettings = options.llmClient ? llmClient.settings : settings;
  const activities = {
    ...createActivities({
      llm: llmClient,
      indexes,
      ...(ledger ? { ledger } : {}),
      ...(options.translator
        ? { translator: createLlmClient(llmSettings(llm.url, { models: { ...llmSettings(llm.url).models, translator: FAKE_TRANSLATOR } })) }
        : {}),
    }),
    ...createSweepActivities({ results }),
    ...(batchStore
      ? createLlmBatchActivities({ store: batchStore, apis: { [DEFAULT_PROVIDER]: new BatchApi({ baseURL: llm.url, timeoutMs: 20_000 }) } })
      : {}),
  };
  const names = new NameDirectory([library]);
  const baseLean = createLeanActivities({ lean, timeoutMs: 20_000, names });
  const leanActivities = options.wrapLean ? options.wrapLean(baseLean) : baseLean;

  const createWorkers = async (which: 'both' | 'main' | 'lean' = 'both'): Promise<Worker[]> => [
    ...(which === 'lean'
      ? []
      : [
          await createMainWorker({
            connection: env.nativeConnection,
            namespace: env.namespace ?? 'default',
            activities,
            taskQueue: mainQueue,
            workflowBundle: await workflowBundle(),
            ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
          }),
        ]),
    ...(which === 'lean'
      ? []
      : await Promise.all(
          (options.providers?.queues ?? []).map((q) =>
            createLlmWorker({
              connection: env.nativeConnection,
              namespace: env.namespace ?? 'default',
              activities,
              provider: q.provider,
              ...(q.requestsPerSecond !== undefined ? { requestsPerSecond: q.requestsPerSecond } : {}),
            }),
          ),
        )),
    ...(which === 'lean' || !batchStore
      ? []
      : [
          await createLlmWorker({
            connection: env.nativeConnection,
            namespace: env.namespace ?? 'default',
            activities,
            provider: 'batch',
            taskQueue: LLM_BATCH_TASK_QUEUE,
            maxConcurrentActivityTaskExecutions: 100,
          }),
        ]),
    ...(which === 'main'
      ? []
      : [
          await createLeanWorker({
            connection: env.nativeConnection,
            namespace: env.namespace ?? 'default',
            activities: leanActivities,
            taskQueue: leanQueue,
          }),
        ]),
  ];

  const runLlm: LlmCallPolicy = {
    timeoutMs: runSettings.timeoutMs,
    maxReasks: runSettings.maxReasks,
    ...(options.providers ? { providers: options.providers.roles } : {}),
  };
  return {
    env,
    client: env.client,
    runLlm,
    llm,
    repl,
    lean,
    llmClient,
    ...(ledger ? { ledger } : {}),
    indexes,
    dataDir,
    results,
    mainQueue,
    leanQueue,
    createWorkers,
    async withWorkers<T>(fn: () => Promise<T>): Promise<T> {
      const workers = await createWorkers();
      const work = fn();
      const [result] = await Promise.all([work, ...workers.map((w) => w.runUntil(work.catch(() => undefined)))]);
      return result as T;
    },
    start: (statement, config = {}, extra = {}) =>
      startFormalization(
        env.client,
        { statement, library: library.name, config, leanTaskQueue: leanQueue, llm: runLlm, ...extra },
        mainQueue,
      ),
    result: (id) => env.client.workflow.getHandle(id).result() as Promise<FormalizeResult>,
    async close() {
      await results.close();
      await lean.close();
      await llm.close();

      repl?.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The shared workflow bundle written to `dir`, for worker processes started by a test
 * (`DRIFTLINE_WORKFLOW_BUNDLE`): they load it instead of bundling the workflows again. */
export async function workflowBundleFile(dir: string): Promise<string> {
  const file = join(dir, 'workflow-bundle.js');
  writeFileSync(file, (await workflowBundle()).code);
  return file;
}
