// `npm run fixtures:record [name…]`: records the replay fixtures of today's workflow code
// (test/fixtures/histories/<name>.json), one scenario per path that matters, on the real
// Temporal dev server with the real workers and activities over the fake LLM server and the
// fake Lean REPL (the same stack the integration tests use). test/unit/replay.test.ts replays
// them. Histories of older code (`*-before-<patch>.json`) are never written here: they are kept
// as they were recorded, so the old side of each patch keeps replaying (docs/testing.md).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startChecks } from '../client/checks';
import { retrySweep } from '../client/sweep-retry';
import { signalSweep } from '../client/sweeps';
import { startRescore } from '../client/sweep-rescore';
import { indexBuildWorkflowId, type BuildIndexInput } from '../common/index-build';
import { batcherWorkflowId } from '../common/llm-batch';
import type { SweepProgress } from '../common/sweep';
import { versionForCorpus } from '../engines/retrieval/stores/build';
import type { PredictionSet } from '../engines/sweeps/predictions';
import { loadBenchmark } from '../engines/benchmarks/load';
import { answer, defaultBrain, FAKE_MODELS, startFakeOpenAI, toolCall, type FakeHandler } from './fakes/openai-server';
import { loadConfig, runLlmSettings } from '../infra/config';
import { createConfiguredLlm } from '../infra/deps';
import { HISTORIES_DIR } from './helpers/history';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type StackOptions, type TestStack } from './helpers/stack';
import { MINI_BENCHMARK, miniSpec, startOnStack } from './helpers/sweep';

const STATEMENT = 'If p is a prime number then p is at least 2.';
const GOOD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry\n```';
const BAD = '```lean\ntheorem prime_two_le (p : ℕ) (hp : Nat.Primee p) : 2 ≤ p := by sorry\n```';
const GOLD = 'theorem thm_P (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';
const REPL = { unknownIdentifiers: ['Nat.Primee'], typeMismatchPatterns: ['Even \\(2 \\* n\\)'] };

const GOOD_CODE = 'theorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';
const BAD_CODE = GOOD_CODE.replace('Nat.Prime p', 'Nat.Primee p');

interface Scenario {
  /** What the histories show (printed as they are written). */
  about: string;
  /** The stack's options, or a setup that makes them (with what to close afterwards). */
  stack?: StackOptions | (() => Promise<{ options: StackOptions; cleanup: () => Promise<void> }>);
  /** Runs the scenario on the stack (workers polling) and answers history name → workflow ID. */
  run(s: TestStack): Promise<Record<string, string>>;
}

const result = (s: TestStack, id: string) => s.client.workflow.getHandle(id).result();

const SCENARIOS: Record<string, Scenario> = {
  'formalize-completed': {
    about: 'a pipeline run: decompose, retrieve, illustrate, formalize, compile, judge, the ledger read',
    stack: { repl: REPL },
    async run(s) {
      const id = await s.start(STATEMENT, {}, { id: 'rec-formalize-completed' });
      await result(s, id);
      return { 'formalize-completed': id };
    },
  },
  'formalize-repair-rounds': {
    about: 'formalize, then a repair round with name resolution, compiled, and the equivalence check beside the judge',
    stack: { repl: REPL },
    async run(s) {
      s.llm.script(FAKE_MODELS.formalizer, { content: BAD }, { content: GOOD });
      const id = await s.start(STATEMENT, { repairRounds: 2 }, { id: 'rec-formalize-repair', goldStatement: GOLD });
      await result(s, id);
      return { 'formalize-repair-rounds': id };
    },
  },
  'formalize-repeated-prompt': {
    about: 'the repair loop ended because a round would send a prompt already sent',
    stack: { repl: REPL },
    async run(s) {
      s.llm.script(FAKE_MODELS.formalizer, { content: BAD, repeat: true });
      const id = await s.start(STATEMENT, { repairRounds: 3 }, { id: 'rec-formalize-repeated' });
      await result(s, id);
      return { 'formalize-repeated-prompt': id };
    },
  },
  'formalize-repairs-exhausted': {
    about: 'every repair round used, never compiled',
    stack: {
      repl: REPL,
      llm: {
        handler: (() => {
          let drafts = 0;
          const h: FakeHandler = (req) =>
            req.model === FAKE_MODELS.formalizer ? { content: BAD.replace('prime_two_le', `prime_two_le_${++drafts}`) } : defaultBrain(req);
          return h;
        })(),
      },
    },
    async run(s) {
      const id = await s.start(STATEMENT, { repairRounds: 2 }, { id: 'rec-formalize-exhausted' });
      await result(s, id);
      return { 'formalize-repairs-exhausted': id };
    },
  },
  'formalize-compile-skipped': {
    about: 'no Lean configured: compile skipped, the judge still runs',
    stack: { repl: false },
    async run(s) {
      const id = await s.start(STATEMENT, {}, { id: 'rec-formalize-skipped' });
      await result(s, id);
      return { 'formalize-compile-skipped': id };
    },
  },
  'formalize-budget-exhausted': {
    about: 'the run\u2019s token budget spent at the formalizer: the run ends budget-exhausted',
    stack: { repl: REPL, ledger: true },
    async run(s) {
      const id = await s.start(STATEMENT, { tokenBudget: 1, cache: false }, { id: 'rec-formalize-budget' });
      await result(s, id);
      return { 'formalize-budget-exhausted': id };
    },
  },
  'formalize-agent-completed': {
    about: 'an agent run: write_file, run_lean, resolve_name, a fix, the final compile, the judge',
    stack: { repl: REPL },
    async run(s) {
      s.llm.script(
        FAKE_MODELS.agent,
        toolCall('write_file', { code: BAD_CODE }),
        toolCall('run_lean'),
        toolCall('resolve_name', { token: 'Nat.Primee', namespace_hints: ['Nat'] }),
        toolCall('write_file', { code: GOOD_CODE }),
        toolCall('run_lean'),
        answer('The file compiles and says what the text says.\n{"status": "success"}'),
      );
      const id = await s.start(STATEMENT, { mode: 'agent' }, { id: 'rec-agent' });
      await result(s, id);
      return { 'formalize-agent-completed': id };
    },
  },
  'sweep-completed': {
    about: 'a sweep of DRIFT and no-retrieval cells, two samples, continuing as new part-way (the first run and the last)',
    stack: { repl: REPL },
    async run(s) {
      const started = await startOnStack(s, miniSpec({ samples: 2, window: 3 }), { id: 'rec-sweep', historyLimit: 200 });
      const handle = s.client.workflow.getHandle(started.id);
      const final = (await handle.result()) as SweepProgress;
      if (final.generation < 1) throw new Error('the sweep did not continue as new');
      const first = await firstRunId(s, started.id);
      return { 'sweep-completed': `${started.id}@${first}`, 'sweep-completed-last-run': started.id };
    },
  },
  'sweep-batch': {
    about:
      'a batch-mode sweep: its runs\u2019 LLM calls on the batch queue, and the batcher: flushes, polls, a partial batch whose failed line is sent again, the idle end',
    stack: { repl: REPL, batch: {} },
    async run(s) {
      s.llm.batches.failNext({ kind: 'partial', lines: 1 });
      const id = 'rec-sweep-batch';
      const spec = miniSpec({
        configurations: [{ name: 'drift', config: { repairRounds: 1 } }],
        window: 8,
        llm: { batch: true },
      });
      await startOnStack(s, spec, { id });
      await result(s, id);
      const batcher = batcherWorkflowId(id, 'default', FAKE_MODELS.decomposer);
      await s.client.workflow.getHandle(batcher).result();
      const [first] = await loadBenchmark({ path: MINI_BENCHMARK, format: 'rautoformalizer', limit: 1 });
      return { 'sweep-batch-run': `${id}/drift/${first!.id}/0`, 'llm-batcher': batcher };
    },
  },
  'sweep-batch-cancelled': {
    about: 'a batch-mode sweep cancelled while its batch is at the provider: the batcher cancels it there and looks until it has ended',
    stack: { repl: REPL, batch: {}, llm: { batches: { delayMs: 3000 } } },
    async run(s) {
      const id = 'rec-sweep-batch-cancelled';
      await startOnStack(s, miniSpec({ configurations: [{ name: 'drift', config: {} }], window: 8, llm: { batch: true } }), { id });
      const deadline = Date.now() + 60_000;
      while (s.llm.batches.stats().batchesCreated === 0) {
        if (Date.now() > deadline) throw new Error('no batch was submitted');
        await new Promise((r) => setTimeout(r, 100));
      }
      await signalSweep(s.client, id, 'cancel');
      const batcher = batcherWorkflowId(id, 'default', FAKE_MODELS.decomposer);
      await s.client.workflow.getHandle(batcher).result();
      await result(s, id);
      return { 'llm-batcher-cancelled': batcher };
    },
  },
  'sweep-retry': {
    about: 'a sweep with failing units retried by the sweep, then `driftline sweep retry`\u2019s round',
    stack: {
      repl: REPL,
      llm: {
        handler: (req) =>
          brokenUntilFixed.broken && req.model === FAKE_MODELS.formalizer && JSON.stringify(req.messages).includes('identity is unique')
            ? { status: 400, message: 'this statement is refused by the provider' }
            : defaultBrain(req),
      },
    },
    async run(s) {
      const id = 'rec-sweep-retry';
      const spec = miniSpec({ configurations: [{ name: 'mono', config: { retrieval: 'monolithic', judge: false } }], maxAttempts: 2 });
      await startOnStack(s, spec, { id });
      await result(s, id);
      brokenUntilFixed.broken = false;
      const retried = await retrySweep(s.client, s.results, id);
      if (!retried.round) throw new Error('nothing to retry');
      await result(s, id);
      return { 'sweep-retry': id };
    },
  },
  'sweep-predictions': {
    about: 'a sweep with a predictions configuration beside a generated one; one of its evaluateStatement children',
    stack: { repl: REPL },
    async run(s) {
      const items = await loadBenchmark({ path: MINI_BENCHMARK, format: 'rautoformalizer', limit: 3 });
      const [a, b] = items;
      const set: PredictionSet = {
        sha256: '0'.repeat(64),
        // a: its gold statement; b: a broken one; the third item has none (recorded missing).
        entries: [
          { item: a!.id, sample: 0, statement: a!.goldStatement! },
          { item: b!.id, sample: 0, statement: b!.goldStatement!.replace(':= by sorry', '∧ Nat.Primee 2 := by sorry') },
        ],
        ignored: { lines: 0 },
      };
      const spec = miniSpec({
        configurations: [
          { name: 'drift', config: {} },
          {
            name: 'given',
            config: { judge: true },
            predictions: { path: 'recorded.jsonl', format: 'jsonl', fields: { id: 'name', statement: 'lean4' } },
          },
        ],
      });
      const started = await startOnStack(
        s,
        { ...spec, benchmarks: [{ ...spec.benchmarks[0]!, limit: 3 }] },
        {
          id: 'rec-sweep-predictions',
          predictions: new Map([['given', set]]),
        },
      );
      await result(s, started.id);
      return { 'sweep-predictions': started.id, 'evaluate-statement': `${started.id}/given/${a!.id}/0` };
    },
  },
  'sweep-rescore': {
    about: 'a rescore of a finished sweep by another judge: the sweep of rejudge units, one judged again and one carried over',
    async stack() {
      // Two providers, as a deployment with a second judge has them (DRIFTLINE_PROVIDERS).
      const [first, second] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
      const root = mkdtempSync(join(tmpdir(), 'driftline-record-'));
      const config = loadConfig({
        env: {
          DRIFTLINE_PROVIDERS: JSON.stringify({
            first: { baseURL: first.url, apiKey: 'key-first', structuredOutput: 'json_schema' },
            second: { baseURL: second.url, apiKey: 'key-second', structuredOutput: 'json_schema', model: FAKE_MODELS.judge },
          }),
          DRIFTLINE_ROLE_DECOMPOSER: `first:${FAKE_MODELS.decomposer}`,
          DRIFTLINE_ROLE_FORMALIZER: `first:${FAKE_MODELS.formalizer}`,
          DRIFTLINE_ROLE_JUDGE: `first:${FAKE_MODELS.judge}`,
          DRIFTLINE_ROLE_AGENT: `first:${FAKE_MODELS.agent}`,
          DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`,
          DRIFTLINE_DATA_DIR: join(root, 'data'),
        },
        root,
      });
      return {
        options: {
          repl: REPL,
          ledger: true,
          llmClient: (ledger) => createConfiguredLlm(config, ledger),
          providers: { queues: [{ provider: 'first' }, { provider: 'second' }], roles: runLlmSettings(config).providers },
        },
        async cleanup() {
          await Promise.all([first.close(), second.close()]);
          rmSync(root, { recursive: true, force: true });
        },
      };
    },
    async run(s) {
      const spec = miniSpec({
        configurations: [
          { name: 'drift', config: {} },
          { name: 'unjudged', config: { judge: false, retrieval: 'none', repairRounds: 0 } },
        ],
      });
      const source = await startOnStack(s, { ...spec, benchmarks: [{ ...spec.benchmarks[0]!, limit: 3 }] }, { id: 'rec-rescore-source' });
      await result(s, source.id);
      const rescore = await startRescore(s.client, s.results, source.id, {
        id: 'rec-rescored',
        judge: { provider: 'second' },
        threshold: 9,
        providerNames: ['second'],
        taskQueue: s.mainQueue,
        leanTaskQueue: s.leanQueue,
        llm: s.runLlm,
      });
      await result(s, rescore.id);
      return {
        'sweep-rescore': rescore.id,
        'rejudge-completed': `${rescore.id}/drift/Demo.prime_ge_two/0`,
        'rejudge-carried': `${rescore.id}/unjudged/Demo.prime_ge_two/0`,
      };
    },
  },
  'check-statements': {
    about: 'a batch of Lean checks: one compiles and is compared with its gold, one fails, one refused by the screen',
    stack: { repl: REPL },
    async run(s) {
      const id = await startChecks(
        s.client,
        [
          { id: 'ok', statement: GOLD, gold: GOLD },
          { id: 'unknown', statement: GOLD.replace('Nat.Prime', 'Nat.Primee') },
          { id: 'hostile', statement: `${GOLD}\n#eval IO.println "leaked"` },
        ],
        { id: 'rec-checks', taskQueue: s.mainQueue, leanTaskQueue: s.leanQueue },
      );
      await result(s, id);
      return { 'check-statements': id };
    },
  },
  'build-index': {
    about: 'a durable index build in chunks, completed and promoted',
    async run(s) {
      const { version } = await versionForCorpus(FIXTURE_LIBRARY, FIXTURE_CORPUS, undefined);
      const input: BuildIndexInput = { library: FIXTURE_LIBRARY, corpusPath: FIXTURE_CORPUS, version, chunkSize: 3, batchSize: 2 };
      const workflowId = indexBuildWorkflowId(FIXTURE_LIBRARY, version);
      const handle = await s.client.workflow.start('buildIndex', { taskQueue: s.mainQueue, workflowId, args: [input] });
      await handle.result();
      return { 'build-index': workflowId };
    },
  },
};

/** The sweep-retry scenario's provider refuses one item until the first sweep has ended. */
const brokenUntilFixed = { broken: true };

/** The first run of a workflow that continued as new (its first execution). */
async function firstRunId(s: TestStack, workflowId: string): Promise<string> {
  for await (const wf of s.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    if (wf.status.name === 'CONTINUED_AS_NEW' && !(await hasPrevious(s, workflowId, wf.runId))) return wf.runId;
  throw new Error(`no first run of ${workflowId}`);
}

async function hasPrevious(s: TestStack, workflowId: string, runId: string): Promise<boolean> {
  const history = await s.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return Boolean(history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId);
}

async function record(env: TestWorkflowEnvironment, name: string, scenario: Scenario): Promise<string[]> {
  const setup = typeof scenario.stack === 'function' ? await scenario.stack() : { options: scenario.stack ?? {}, cleanup: async () => {} };
  const s = await createStack(env, setup.options);
  try {
    const ids = await s.withWorkers(() => scenario.run(s));
    const written: string[] = [];
    for (const [file, ref] of Object.entries(ids)) {
      const [workflowId, runId] = ref.split('@') as [string, string | undefined];
      const history = await s.client.workflow.getHandle(workflowId, runId).fetchHistory();
      writeFileSync(`${HISTORIES_DIR}${file}.json`, historyToJSON(history));
      written.push(`${file}.json (${history.events?.length ?? 0} events)`);
    }
    return written;
  } finally {
    await s.close();
    await setup.cleanup();
  }
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const unknown = only.filter((n) => !(n in SCENARIOS));
  if (unknown.length) throw new Error(`no scenario ${unknown.join(', ')}; scenarios: ${Object.keys(SCENARIOS).join(', ')}`);
  const env = await startTemporal();
  try {
    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      if (only.length && !only.includes(name)) continue;
      process.stdout.write(`${name}: ${scenario.about}\n`);
      for (const line of await record(env, name, scenario)) process.stdout.write(`  wrote ${line}\n`);
    }
  } finally {
    await env.teardown();
  }
}

await main();
