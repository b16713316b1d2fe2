// `driftline sweep rescore`: a finished sweep judged again by a second judge, as a sweep of its
// own, through the real CLI, Temporal dev server, workers, results database and fakes. The two
// fake judges disagree on a known set of items, so the agreement in the report is a number
// worked out below by hand; nothing is formalized or compiled again (counted at the fakes).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { loadConfig, runLlmSettings } from '../../infra/config';
import { createConfiguredLlm, probeAndRecordProviders } from '../../infra/deps';
import type { ReportData } from '../../engines/report/report-data';
import { createStack, FIXTURE_CORPUS, FIXTURE_LIBRARY, startTemporal, type TestStack } from '../helpers/stack';
import { miniSpec, progressOf, startOnStack, waitFor } from '../helpers/sweep';
import { defaultBrain, FAKE_MODELS, startFakeOpenAI, type FakeHandler, type FakeOpenAI, type FakeRequest } from '../fakes/openai-server';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));
const SECOND_MODEL = 'fake-judge-two';

// The informal statements of the mini benchmark's items, by item.
const INFORMAL: Record<string, string> = {
  'Demo.prime_ge_two': 'If p is a prime number then p is at least 2.',
  'Demo.even_double': 'Twice any natural number is even.',
  'Demo.prime_odd': 'Every prime number other than two is odd.',
  'Demo.divides_refl': 'Every integer divides itself.',
  'Demo.group_one': 'In a group the identity is unique.',
  'Demo.square_nonneg': 'The square of a real number is nonnegative.',
  'Demo.prime_pos': 'A prime number is positive.',
  'Demo.even_sum': 'The sum of two even numbers is even.',
};
// Items each judge calls faithful (grade 10; every other item gets 6 from the first judge, 5
// from the second). Demo.group_one never compiles here (Lean does not know `Group`), so its
// verdict is "unfaithful" by rule for both and it is left out of kappa.
const FIRST_FAITHFUL = ['Demo.prime_ge_two', 'Demo.even_double', 'Demo.prime_odd', 'Demo.divides_refl', 'Demo.square_nonneg'];
const SECOND_FAITHFUL = ['Demo.prime_ge_two', 'Demo.even_double', 'Demo.prime_odd', 'Demo.prime_pos'];

function judgeBrain(faithful: string[], low: number): FakeHandler {
  return (req: FakeRequest) => {
    const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
    const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
    const isJudge = req.model.includes('judge') || system.includes('grade');
    if (!isJudge) return defaultBrain(req);
    const item = Object.keys(INFORMAL).find((id) => user.includes(INFORMAL[id]!));
    const yes = item !== undefined && faithful.includes(item);
    return { content: JSON.stringify({ grade: yes ? 10 : low, faithful: yes, explanation: yes ? 'the same claim' : 'a different claim' }) };
  };
}

let env: TestWorkflowEnvironment;
let stack: TestStack;
let first: FakeOpenAI;
let second: FakeOpenAI;
let root: string;
let providersEnv: Record<string, string>;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliWith(
    { ...process.env, ...providersEnv, DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`, DRIFTLINE_DATA_DIR: stack.dataDir },
    ...args,
  );
}

/** The CLI from a second terminal that knows only where Temporal and the data directory are:
 * no LLM provider, no library of its own. */
async function bareCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const keep = Object.fromEntries(['PATH', 'HOME', 'TMPDIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
  return cliWith({ ...keep, DRIFTLINE_DATA_DIR: stack.dataDir }, ...args);
}

async function cliWith(base: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: { ...base, TEMPORAL_ADDRESS: env.address },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs `fn` while the stack's workers poll (main, Lean, and one per provider queue). */
async function withWorkers<T>(fn: () => Promise<T>): Promise<T> {
  const workers: Worker[] = await stack.createWorkers();
  const running = workers.map((w) => w.run());
  try {
    return await fn();
  } finally {
    for (const w of workers) w.shutdown();
    await Promise.all(running);
  }
}

beforeAll(async () => {
  env = await startTemporal();
  [first, second] = await Promise.all([
    startFakeOpenAI({ handler: judgeBrain(FIRST_FAITHFUL, 6) }),
    startFakeOpenAI({ handler: judgeBrain(SECOND_FAITHFUL, 5) }),
  ]);
  root = mkdtempSync(join(tmpdir(), 'driftline-rescore-'));
  providersEnv = {
    DRIFTLINE_PROVIDERS: JSON.stringify({
      first: { baseURL: first.url, apiKey: 'key-first', structuredOutput: 'json_schema' },
      second: { baseURL: second.url, apiKey: 'key-second', structuredOutput: 'json_schema', model: SECOND_MODEL },
    }),
    DRIFTLINE_ROLE_DECOMPOSER: `first:${FAKE_MODELS.decomposer}`,
    DRIFTLINE_ROLE_FORMALIZER: `first:${FAKE_MODELS.formalizer}`,
    DRIFTLINE_ROLE_JUDGE: `first:${FAKE_MODELS.judge}`,
    DRIFTLINE_ROLE_AGENT: `first:${FAKE_MODELS.agent}`,
  };
  const config = loadConfig({
    env: { ...providersEnv, DRIFTLINE_LIBRARIES: `${FIXTURE_LIBRARY}=${FIXTURE_CORPUS}`, DRIFTLINE_DATA_DIR: join(root, 'data') },
    root,
  });
  // The CLI starts sweeps on the production task queues.
  stack = await createStack(env, {
    queue: 'default',
    ledger: true,
    repl: { unknownIdentifiers: ['Group'] },
    llmClient: (ledger) => createConfiguredLlm(config, ledger),
    providers: { queues: [{ provider: 'first' }, { provider: 'second' }], roles: runLlmSettings(config).providers },
  });
  // What the main worker does as it starts (infra/run-worker.ts): probe its providers and record
  // them in the data directory, where a client finds the names to ask Temporal about.
  await probeAndRecordProviders({ ...config, dataDir: stack.dataDir }, createConfiguredLlm(config));
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await Promise.all([first?.close(), second?.close()]);
  await env?.teardown();
  if (root) rmSync(root, { recursive: true, force: true });
});

const judged = (f: FakeOpenAI, from: number) => f.requests.slice(from).filter((r) => r.model.includes('judge'));

describe('driftline sweep rescore', () => {
  it('judges a finished sweep again with a second judge, and reports their agreement per configuration', async () => {
    // 1. The source: 8 items × 3 configurations, the third not judged.
    const spec = miniSpec({
      window: 6,
      configurations: [
        { name: 'drift', config: {} },
        { name: 'zero', config: { retrieval: 'none', illustrate: false, repairRounds: 0 } },
        { name: 'unjudged', config: { retrieval: 'none', repairRounds: 0, judge: false } },
      ],
    });
    await startOnStack(stack, spec, { id: 'rescore-source' });
    await withWorkers(() =>
      waitFor('the source sweep', async () => (await progressOf(stack, 'rescore-source')).status === 'completed', 300_000),
    );
    const source = await stack.results.runs('rescore-source');
    expect(source).toHaveLength(24);
    // What the first judge said: its faithful items, where Lean accepted the statement.
    for (const r of source.filter((r) => r.config !== 'unjudged'))
      expect([r.item, r.faithful]).toEqual([r.item, r.item !== 'Demo.group_one' && FIRST_FAITHFUL.includes(r.item)]);
    expect(source.filter((r) => r.item === 'Demo.group_one').every((r) => !r.compiled)).toBe(true);
    expect(second.requests).toHaveLength(0);

    // 2. An unknown provider is refused before anything starts, listing the stack's providers,
    // whatever the shell's environment has: none, or one the stack does not serve.
    const unknown = await bareCli('sweep', 'rescore', 'rescore-source', '--id', 'never', '--judge', 'nope:some-model');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /driftline: judge nope:some-model: no LLM provider "nope" is configured \(configured: "first", "second"\)/,
    );
    const shellOnly = await cliWith(
      { ...process.env, DRIFTLINE_DATA_DIR: stack.dataDir, DRIFTLINE_PROVIDERS: JSON.stringify({ mine: { baseURL: first.url } }) },
      ...['sweep', 'rescore', 'rescore-source', '--id', 'never', '--judge', 'mine'],
    );
    expect(shellOnly.code).toBe(1);
    expect(shellOnly.stderr).toMatch(/no LLM provider "mine" is configured \(configured: "first", "second"\)/);
    expect(await stack.results.getSweep('never')).toBeNull();

    // 3. The rescore returns once started: no worker is running. The CLI has no provider of its
    // own (only TEMPORAL_ADDRESS and the data directory): the stack's `second` is enough.
    const before = { first: first.requests.length, second: second.requests.length, compiles: stack.repl!.count('begin') };
    const started = await bareCli('sweep', 'rescore', 'rescore-source', '--id', 'rescored', '--judge', `second:${SECOND_MODEL}`);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(
      /sweep rescored started: a rescore of rescore-source by the judge second:fake-judge-two \(faithful: grade ≥ 9\), 24 runs/,
    );
    expect(JSON.parse((await cli('sweep', 'status', 'rescored', '--json')).stdout)).toMatchObject({
      status: 'running',
      total: 24,
      done: 0,
    });
    await withWorkers(() => waitFor('the rescore', async () => (await progressOf(stack, 'rescored')).status === 'completed', 300_000));

    // Nothing was formalized, decomposed or compiled again, and the first judge was not asked.
    // The second judge judged each judged unit (2 configurations × 8 items): both configurations
    // wrote the same statement of an item here, so the second asking is the reply cache's.
    expect(first.requests.length - before.first).toBe(0);
    expect(stack.repl!.count('begin')).toBe(before.compiles);
    expect(second.requests.length - before.second).toBe(8);
    expect(judged(second, before.second)).toHaveLength(8);
    expect(second.requests.every((r) => r.model === SECOND_MODEL && r.authorization === 'Bearer key-second')).toBe(true);
    expect(await stack.ledger!.sweepModels('rescored')).toEqual([
      { stage: 'judge', provider: expect.any(String), model: SECOND_MODEL, calls: 16, cacheHits: 8 },
    ]);

    // 4. One record per unit, under the rescore's IDs.
    const records = await stack.results.runs('rescored');
    expect(records).toHaveLength(24);
    expect(new Set(records.map((r) => r.workflowId)).size).toBe(24);
    for (const r of records) expect(r.workflowId).toBe(`rescored/${r.config}/${r.item}/${r.sample}`);
    expect((await stack.results.getSweep('rescored'))!.rescoreOf).toBe('rescore-source');
    expect((await cli('sweep', 'list')).stdout).toMatch(/^rescored\s+completed\s+24\/24 done, 0 failed .*\(rescore of rescore-source\)$/m);

    // The export keeps the contract's fields, and has the new judge's verdict where it judged.
    const exported = await cli('sweep', 'export', 'rescored', '--format', 'jsonl');
    expect(exported.code, exported.stderr).toBe(0);
    const rows = exported.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(24);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(
        expect.arrayContaining(['config', 'item', 'sample', 'outcome', 'compiled', 'judgeGrade', 'faithful']),
      );
      const src = source.find((s) => s.config === row.config && s.item === row.item && s.sample === row.sample)!;
      expect(row.compiled).toBe(src.compiled);
      expect(row.sourceJudgeGrade).toBe(src.judgeGrade);
      expect(row.sourceFaithful).toBe(src.faithful);
      if (row.config === 'unjudged') {
        // Not judged at the source: carried over as it was, the judge not asked.
        expect(row).toMatchObject({ judgeGrade: null, faithful: null, outcome: src.outcome, carried: 'the source run was not judged' });
      } else if (row.item === 'Demo.group_one') {
        expect(row).toMatchObject({ outcome: 'not-compiled', faithful: false });
      } else {
        const yes = SECOND_FAITHFUL.includes(row.item as string);
        expect(row).toMatchObject({ judgeGrade: yes ? 10 : 5, faithful: yes, outcome: yes ? 'faithful' : 'unfaithful' });
      }
    }

    // 5. The report: both judges side by side, kappa per configuration, worked by hand.
    // Over the 7 items Lean accepted (Demo.group_one left out), first judge × second judge:
    //                    second faithful   second not
    //   first faithful          3               2        (prime_ge_two, even_double, prime_odd | divides_refl, square_nonneg)
    //   first not               1               1        (prime_pos | even_sum)
    //   p_o = (3 + 1) / 7 = 4/7
    //   first says faithful 5/7, second 4/7
    //   p_e = (5/7)(4/7) + (2/7)(3/7) = 20/49 + 6/49 = 26/49
    //   κ = (4/7 − 26/49) / (1 − 26/49) = (2/49) / (23/49) = 2/23 ≈ 0.087
    const out = join(root, 'report');
    const report = await cli('sweep', 'report', 'rescored', '--out', out);
    expect(report.code, report.stderr).toBe(0);
    const data = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as ReportData;
    const agreement = data.judgeAgreement!;
    expect(agreement.rescore).toMatchObject({ of: 'rescore-source', judge: `second:${SECOND_MODEL}`, threshold: 9, equivalence: false });
    for (const config of ['drift', 'zero']) {
      const c = agreement.configs.find((x) => x.config === config)!;
      expect(c).toMatchObject({ units: 8, carried: 0, judgedByBoth: 8, compared: 7 });
      expect(c.table).toEqual({ both: 3, firstOnly: 2, secondOnly: 1, neither: 1 });
      expect(c.observed).toBeCloseTo(4 / 7, 12);
      expect(c.expected).toBeCloseTo(26 / 49, 12);
      expect(c.kappa.estimate).toBeCloseTo(2 / 23, 12);
      expect(c.kappa.interval!.lo).toBeLessThanOrEqual(2 / 23);
      expect(c.kappa.interval!.hi).toBeGreaterThanOrEqual(2 / 23);
    }
    const unjudged = agreement.configs.find((x) => x.config === 'unjudged')!;
    expect(unjudged).toMatchObject({ units: 8, carried: 8, judgedByBoth: 0, compared: 0, kappa: { estimate: null, interval: null } });
    expect(agreement.disagreements).toHaveLength(6);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toContain('## Judges side by side');
    expect(md).toMatch(/\| drift \| 8 \| 0 \| 8 \| 7 \| 3 \| 2 \| 1 \| 1 \| 57\.1 \| 0\.09 \[/);
    expect(md).toMatch(/\| unjudged \| 8 \| 8 \| 0 \| 0 \| 0 \| 0 \| 0 \| 0 \| – \| no unit has both verdicts \|/);
    expect(md).not.toMatch(/NaN/);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('Judges side by side');
  }, 900_000);

  it('takes a rubric file and a threshold; the rubric reaches the judge only as its instructions', async () => {
    const rubric = join(root, 'rubric.txt');
    writeFileSync(rubric, 'Grade how closely the Lean statement says what the informal one says, 0 to 10.\n');
    const before = second.requests.length;
    const started = await cli(
      'sweep',
      'rescore',
      'rescore-source',
      '--id',
      'rescored-lenient',
      '--judge',
      'second',
      '--rubric',
      rubric,
      '--threshold',
      '5',
    );
    expect(started.code, started.stderr).toBe(0);
    await withWorkers(() =>
      waitFor('the second rescore', async () => (await progressOf(stack, 'rescored-lenient')).status === 'completed', 300_000),
    );
    // A new prompt (the rubric): asked again, once per distinct statement (8), not from the cache
    // of the first rescore.
    const asked = second.requests.slice(before);
    expect(asked).toHaveLength(8);
    for (const r of asked) {
      const system = r.messages.find((m) => m.role === 'system')!.content;
      expect(system).toBe(
        'Grade how closely the Lean statement says what the informal one says, 0 to 10.\n\nReply with a JSON object {"grade": <integer 0-10>, "faithful": <true|false>, "explanation": "<a few sentences comparing the two statements>"} and nothing else.',
      );
    }
    // At threshold 5 every compiled statement the second judge graded 5 or 10 is faithful.
    const records = await stack.results.runs('rescored-lenient');
    for (const r of records.filter((x) => x.config === 'drift'))
      expect([r.item, r.faithful]).toEqual([r.item, r.item !== 'Demo.group_one']);

    const bad = join(root, 'empty.txt');
    writeFileSync(bad, '  \n');
    const refused = await cli('sweep', 'rescore', 'rescore-source', '--id', 'never-2', '--judge', 'second', '--rubric', bad);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--rubric .*empty\.txt: the rubric is empty/);
  }, 600_000);
  it('with --equivalence, runs the BEq+ check again on the Lean queue and nothing else there', async () => {
    const beforeEvents = stack.repl!.events().length;
    const [a, b] = [first.requests.length, second.requests.length];
    const started = await cli(
      'sweep',
      'rescore',
      'rescore-source',
      '--id',
      'rescored-beq',
      '--judge',
      `second:${SECOND_MODEL}`,
      '--equivalence',
      '--json',
    );
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({ id: 'rescored-beq', existing: false, total: 24 });
    await withWorkers(() =>
      waitFor('the rescore with equivalence', async () => (await progressOf(stack, 'rescored-beq')).status === 'completed', 300_000),
    );
    // Lean saw only the equivalence check's commands (its hypothesis theorem first), never a
    // statement compiled again; the judge's prompts were those of the first rescore, so the
    // reply cache answered them all; no formalizer was asked.
    // (`name=-`: a header command of a REPL process started meanwhile, if any.)
    const commands = stack
      .repl!.events()
      .slice(beforeEvents)
      .filter((e) => e.event === 'begin');
    expect(new Set(commands.map((e) => e.detail).filter((d) => d !== 'name=-'))).toEqual(new Set(['name=driftline_hyp']));
    expect([first.requests.length - a, second.requests.length - b]).toEqual([0, 0]);
    const source = await stack.results.runs('rescore-source');
    const records = await stack.results.runs('rescored-beq');
    expect(records).toHaveLength(24);
    for (const r of records) {
      const src = source.find((s) => s.config === r.config && s.item === r.item)!;
      // Asked again where the source was judged and compiled; the same answer as the source's.
      expect([r.config, r.item, r.equivalent]).toEqual([r.config, r.item, src.equivalent]);
    }
    expect(records.filter((r) => r.config !== 'unjudged' && r.compiled).every((r) => r.equivalent !== null)).toBe(true);
  }, 600_000);
});
