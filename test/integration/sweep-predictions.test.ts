// A predictions configuration (statements made elsewhere, read from a JSONL file) beside a
// generated one, over real ConNF dev items, started with `driftline sweep start` as a user
// would, run by the real workers against the fake LLM and the fake Lean REPL, and ending in one
// report with paired tests between the two. The file has statements that compile (the gold
// ones), statements Lean rejects, missing items and samples, and hostile statements the screen
// must refuse before Lean. Malformed files stop `sweep start` before anything starts, naming
// FILE:LINE: field: problem.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { SweepProgress, SweepRunRecord } from '../../common/sweep';
import { loadBenchmark } from '../../engines/benchmarks/load';
import { sweepReportInput } from '../../client/sweep-report';
import { buildReportData } from '../../engines/report/report-data';
import { renderSweepReportAs } from '../../engines/report/write-report';
import type { BenchmarkItem } from '../../common/sweep';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { publicData } from '../helpers/public-data';
import { buildServer } from '../../api/server';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));

let DATA: string;
let env: TestWorkflowEnvironment;
let stack: TestStack;
let dir: string;
let items: BenchmarkItem[];

/** A name no real ConNF statement uses: the fake Lean reports it as an unknown identifier. */
const BOGUS = 'ConNF.no_such_lemma';

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        DRIFTLINE_DATA_DIR: stack.dataDir,
        DRIFTLINE_SHARED_DATA: DATA,
        DRIFTLINE_LIBRARIES: `connf=${join(DATA, 'connf', 'library.jsonl')}`,
      },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function write(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

const jsonl = (rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';

/** A sweep file over the first five ConNF dev items, with a predictions configuration reading
 * `predictions` (relative to the sweep file) and, unless `alone`, the generated `drift`. */
function sweepFile(name: string, predictions: string, opts: { alone?: boolean } = {}): string {
  return write(
    name,
    [
      'benchmark: {path: $DATA/connf/benchmark.dev.jsonl, format: rautoformalizer, limit: 5}',
      'library: connf',
      'samples: 2',
      'window: 4',
      'configurations:',
      ...(opts.alone ? [] : ['  drift: {}']),
      `  herald: {predictions: {path: ${predictions}, format: jsonl, fields: {id: name, statement: lean4, sample: k}}, judge: true}`,
      '',
    ].join('\n'),
  );
}

beforeAll(async () => {
  DATA = publicData();
  items = await loadBenchmark({ path: join(DATA, 'connf', 'benchmark.dev.jsonl'), format: 'rautoformalizer', limit: 5 });
  env = await startTemporal();
  // The CLI starts sweeps on the production task queues.
  stack = await createStack(env, {
    queue: 'default',
    library: { name: 'connf', corpusPath: join(DATA, 'connf', 'library.jsonl') },
    repl: { unknownIdentifiers: [BOGUS] },
  });
  dir = mkdtempSync(join(tmpdir(), 'driftline-predictions-'));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

describe('a predictions configuration', () => {
  it('is screened, compiled, compared and judged beside a generated one, missing units recorded, in one report with paired tests', async () => {
    const [a, b, c, d, e] = items.map((i) => i.id) as [string, string, string, string, string];
    const gold = (id: string) => items.find((i) => i.id === id)!.goldStatement!;
    const broken = (id: string) => gold(id).replace(/:=\s*by\s+sorry\s*$/, `∧ ${BOGUS} = ${BOGUS} := by sorry`);
    write(
      'herald.jsonl',
      jsonl([
        { name: a, k: 0, lean4: gold(a) },
        { name: a, k: 1, lean4: gold(a) },
        { name: b, k: 0, lean4: gold(b) },
        { name: b, k: 1, lean4: broken(b) },
        { name: c, k: 0, lean4: broken(c) },
        // c sample 1 and all of d are missing.
        // Hostile: a command after the theorem, and an import of a module nobody allowed.
        { name: e, k: 0, lean4: `theorem hostile_eval : True := by sorry\n#eval IO.println "leaked"` },
        { name: e, k: 1, lean4: `import Lean.Elab.Command\nrun_cmd Lean.logInfo "leaked"\ntheorem hostile_run : True := by sorry` },
        // An item outside the sweep's selection: ignored, with a note.
        { name: 'ConNF.not_in_this_selection', k: 0, lean4: 'theorem t : True := by sorry', extra: 'ignored' },
      ]),
    );
    const file = sweepFile('sweep.yaml', 'herald.jsonl');
    const started = await cli('sweep', 'start', file, '--id', 'pred-sweep');
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/5 items × 2 configurations × 2 samples = 20 runs/);
    expect(started.stderr).toMatch(/herald\.jsonl: 1 line name items outside the sweep's selection and are ignored \(the first: line 8\)/);

    const final = await stack.withWorkers(() => stack.client.workflow.getHandle('pred-sweep').result() as Promise<SweepProgress>);
    expect(final).toMatchObject({ status: 'completed', total: 20, done: 20, failed: 0 });
    expect(final.perConfig.herald).toMatchObject({ total: 10, done: 10, failed: 0 });

    const runs = await stack.results.runs('pred-sweep');
    expect(runs).toHaveLength(20);
    expect(new Set(runs.map((r) => r.workflowId)).size).toBe(20);
    const herald = (item: string, sample: number) => runs.find((r) => r.config === 'herald' && r.item === item && r.sample === sample)!;

    // The gold statements compile and are equivalent to the gold; the judge graded them.
    for (const r of [herald(a, 0), herald(a, 1), herald(b, 0)]) {
      expect(r).toMatchObject({ source: 'predictions', compiled: true, checked: true, equivalent: true, repairRounds: 0, premises: [] });
      expect(r.judgeGrade).toEqual(expect.any(Number));
      expect(typeof r.faithful).toBe('boolean');
      expect(['faithful', 'unfaithful']).toContain(r.outcome);
      // Only the stages it ran: no decompose, retrieve, illustrate, formalize or repair.
      expect(Object.keys(r.stageMs).sort()).toEqual(['compile', 'judge']);
      expect(r.attempts).toEqual([{ round: 0, compiled: true, status: 'ok' }]);
    }
    expect(herald(a, 0).formalStatement).toBe(gold(a));
    // Lean rejected these: not equivalent (not checked), never faithful.
    for (const r of [herald(b, 1), herald(c, 0)]) {
      expect(r).toMatchObject({ outcome: 'not-compiled', compiled: false, checked: true, equivalent: null, faithful: false });
      expect(r.attempts).toEqual([{ round: 0, compiled: false, status: 'error' }]);
    }
    // The hostile ones were refused by the screen; nothing of them reached the REPL.
    for (const r of [herald(e, 0), herald(e, 1)]) {
      expect(r).toMatchObject({ outcome: 'refused', compiled: false, checked: false, equivalent: null, faithful: false });
      expect(r.refusal).toBeTruthy();
      expect(r.attempts).toEqual([{ round: 0, compiled: false, status: 'refused' }]);
    }
    expect(stack.repl!.leaks()).toEqual([]);
    const begun = stack.repl!.events().filter((ev) => ev.event === 'begin');
    expect(begun.length).toBeGreaterThan(0);
    expect(begun.some((ev) => /hostile/.test(ev.detail))).toBe(false);
    // Missing units are recorded once, as missing, with no child workflow.
    for (const r of [herald(c, 1), herald(d, 0), herald(d, 1)]) {
      expect(r).toMatchObject({ outcome: 'missing', source: 'predictions', compiled: false, checked: false, faithful: null });
      await expect(stack.client.workflow.getHandle(r.workflowId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }
    expect(runs.filter((r) => r.config === 'herald' && r.outcome === 'missing')).toHaveLength(3);
    // A predictions unit is an `evaluateStatement` child under the sweep's ID scheme.
    const child = await stack.client.workflow.getHandle(`pred-sweep/herald/${a}/0`).describe();
    expect(child.type).toBe('evaluateStatement');
    const generated = await stack.client.workflow.getHandle(`pred-sweep/drift/${a}/0`).describe();
    expect(generated.type).toBe('formalize');
    // The generated configuration ran its whole pipeline.
    const drift = runs.filter((r) => r.config === 'drift');
    expect(drift).toHaveLength(10);
    expect(drift.every((r) => r.source === undefined && r.stageMs.formalize !== undefined)).toBe(true);

    // Export: config, item, sample, outcome, compiled on every row; judgeGrade and faithful where judged.
    const exported = await cli('sweep', 'export', 'pred-sweep', '--format', 'jsonl');
    expect(exported.code, exported.stderr).toBe(0);
    const rows = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SweepRunRecord);
    expect(rows).toHaveLength(20);
    for (const r of rows) {
      expect(r).toEqual(expect.objectContaining({ config: expect.any(String), item: expect.any(String), sample: expect.any(Number) }));
      expect(typeof r.outcome).toBe('string');
      expect(typeof r.compiled).toBe('boolean');
    }
    const judged = rows.filter((r) => r.config === 'herald' && r.outcome !== 'missing');
    expect(judged).toHaveLength(7);
    for (const r of judged) {
      expect(r.judgeGrade).toEqual(expect.any(Number));
      expect(typeof r.faithful).toBe('boolean');
    }

    // One report: both configurations, paired tests between them, the missing units counted.
    const input = (await sweepReportInput(stack.results, 'pred-sweep', { status: final.status }))!;
    const data = buildReportData(input);
    expect(data.configs).toEqual(['drift', 'herald']);
    const pairs = data.comparisons.filter((cmp) => cmp.a === 'drift' && cmp.b === 'herald');
    expect(pairs.map((cmp) => cmp.metric)).toEqual(
      expect.arrayContaining(['typecheck@1', 'typecheck@k', 'beq@1', 'faithful@1', 'faithful@k']),
    );
    for (const cmp of pairs) expect(cmp.items).toBe(5);
    // No retrieval F1 for a file's statements: nothing of driftline's retrieval to judge.
    expect(pairs.some((cmp) => cmp.metric === 'f1')).toBe(false);
    const heraldMetrics = data.metrics.configs.find((g) => g.config === 'herald')!;
    expect(heraldMetrics).toMatchObject({ runs: 10, failedRuns: 0, missingRuns: 3, retrieval: null });
    // Typecheck@1 by hand: a 2/2, b 1/2, c 0/2, d 0/2, e 0/2 → (1 + 0.5) / 5.
    expect(heraldMetrics.typecheck!.at1.estimate).toBeCloseTo(0.3, 10);
    expect(data.outcomes.find((o) => o.config === 'herald')!.counts).toMatchObject({ missing: 3, refused: 2, 'not-compiled': 2 });
    const md = await renderSweepReportAs(input, 'md');
    expect(md).toContain('missing from the predictions file');
    expect(md).toMatch(/Missing from the predictions file \(counted as failures\): herald 3/);
    expect(md).toMatch(/drift vs herald|drift.*herald/);
    // The report names the file and its hash for the predictions configuration.
    expect(JSON.stringify(input.sweep.configurations?.herald)).toContain('herald.jsonl');
  }, 600_000);

  it('continues as new with predictions units in flight and still records each unit once', async () => {
    // The file of the first test; a history limit that makes the sweep continue as new often.
    const file = sweepFile('alone.yaml', 'herald.jsonl', { alone: true });
    const started = await cli('sweep', 'start', file, '--id', 'pred-can', '--history-limit', '30');
    expect(started.code, started.stderr).toBe(0);
    const final = await stack.withWorkers(() => stack.client.workflow.getHandle('pred-can').result() as Promise<SweepProgress>);
    expect(final).toMatchObject({ status: 'completed', total: 10, done: 10, failed: 0 });
    expect(final.generation).toBeGreaterThan(0);
    const runs = await stack.results.runs('pred-can');
    expect(runs).toHaveLength(10);
    expect(new Set(runs.map((r) => `${r.item}/${r.sample}`)).size).toBe(10);
    const count = (outcome: string) => runs.filter((r) => r.outcome === outcome).length;
    expect([count('missing'), count('refused'), count('not-compiled')]).toEqual([3, 2, 2]);
    // The same file, the same configuration hash as in the first sweep: --reuse would match it.
    const first = (await stack.results.getSweep('pred-sweep'))!.cells.find((c) => c.name === 'herald')!;
    const again = (await stack.results.getSweep('pred-can'))!.cells.find((c) => c.name === 'herald')!;
    expect(again.hash).toBe(first.hash);
    expect(again.predictionsFile).toEqual({ sha256: first.predictionsFile!.sha256, statements: 7 });
  }, 300_000);

  it('stops `sweep start` at a malformed line, naming FILE:LINE: field: problem, before anything starts', async () => {
    const [a, b] = items.map((i) => i.id) as [string, string];
    const cases: { name: string; lines: unknown[]; says: RegExp }[] = [
      { name: 'bad-json', lines: [{ name: a, k: 0, lean4: 't' }, '{"name": oops'], says: /bad-json\.jsonl:2: \(line\): not JSON/ },
      {
        name: 'no-id',
        lines: [
          { name: a, k: 0, lean4: 't' },
          { k: 0, lean4: 't' },
        ],
        says: /no-id\.jsonl:2: name: missing/,
      },
      { name: 'number', lines: [{ name: a, k: 0, lean4: 42 }], says: /number\.jsonl:1: lean4: the statement is a number, not a string/ },
      {
        name: 'twice',
        lines: [
          { name: a, k: 0, lean4: 't' },
          { name: b, k: 0, lean4: 't' },
          { name: a, k: 0, lean4: 'u' },
        ],
        says: /twice\.jsonl:3: name: the item and sample 0 repeat line 1/,
      },
      {
        name: 'range',
        lines: [{ name: a, k: 2, lean4: 't' }],
        says: /range\.jsonl:1: k: sample 2 is out of range: the sweep has samples: 2/,
      },
      { name: 'elsewhere', lines: [{ name: 'Not.An.Item', k: 0, lean4: 't' }], says: /elsewhere\.jsonl: no line names an item/ },
    ];
    for (const c of cases) {
      write(`${c.name}.jsonl`, jsonl(c.lines));
      const file = sweepFile(`${c.name}.yaml`, `${c.name}.jsonl`, { alone: true });
      const out = await cli('sweep', 'start', file, '--id', `bad-${c.name}`);
      expect(out.code, c.name).toBe(1);
      expect(out.stderr).toMatch(c.says);
      expect(out.stderr).toContain(join(dir, `${c.name}.jsonl`));
      // Nothing started: no sweep recorded, no workflow.
      expect(await stack.results.getSweep(`bad-${c.name}`)).toBeNull();
      await expect(stack.client.workflow.getHandle(`bad-${c.name}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }
    // A missing file, and configuration settings that do not apply to a file's statements.
    const gone = await cli('sweep', 'start', sweepFile('gone.yaml', 'nowhere.jsonl', { alone: true }));
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/nowhere\.jsonl: cannot read the predictions file: no such file/);
    const extra = write(
      'extra.yaml',
      readFileSync(sweepFile('extra-base.yaml', 'herald.jsonl', { alone: true }), 'utf8').replace('judge: true', 'topK: 5'),
    );
    const wrong = await cli('sweep', 'start', extra);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/configurations\.herald\.topK: does not apply to a predictions configuration/);
  }, 300_000);

  it('starts over HTTP from a file in the data directory, stores its statements and reports beside a generated configuration', async () => {
    const [a, b] = items.map((i) => i.id) as [string, string];
    // The API reads files from its data directory only: the benchmark and the predictions there.
    const apiData = join(dir, 'api-data');
    mkdirSync(apiData);
    copyFileSync(join(DATA, 'connf', 'benchmark.dev.jsonl'), join(apiData, 'connf.dev.jsonl'));
    writeFileSync(
      join(apiData, 'preds.jsonl'),
      jsonl([
        { id: a, statement: items[0]!.goldStatement },
        { id: 'Elsewhere.x', statement: 't' },
      ]),
    );
    const app = await buildServer({
      temporal: stack.client,
      libraries: ['connf'],
      defaultLibrary: 'connf',
      maxStatementChars: 20_000,
      readiness: async () => ({ ready: true, checks: {}, missing: [] }),
      pressure: { maxEventLoopDelayMs: 0 },
      temporalUiUrl: 'http://127.0.0.1:8233',
      sweeps: { results: stack.results, dataDir: apiData },
    });
    try {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/sweeps?id=pred-api',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          benchmark: { path: 'connf.dev.jsonl', format: 'rautoformalizer', limit: 2 },
          library: 'connf',
          configurations: {
            zero: { retrieval: 'none', illustrate: false, repairRounds: 0, judge: false },
            mine: { predictions: { path: 'preds.jsonl', format: 'jsonl', fields: { id: 'id', statement: 'statement' } }, judge: false },
          },
        }),
      });
      expect(response.statusCode, response.body).toBe(202);
      expect(response.json()).toMatchObject({
        id: 'pred-api',
        total: 4,
        configurations: ['zero', 'mine'],
        notes: [`"preds.jsonl": 1 line name items outside the sweep's selection and are ignored (the first: line 2)`],
      });
      // Stored when the sweep started: one statement, for the first item; the second is missing.
      expect(await stack.results.predictions('pred-api', 'mine')).toEqual([{ ord: 0, sample: 0, statement: items[0]!.goldStatement }]);
      const final = await stack.withWorkers(() => stack.client.workflow.getHandle('pred-api').result() as Promise<SweepProgress>);
      expect(final).toMatchObject({ status: 'completed', total: 4, done: 4 });
      const mine = (await stack.results.runs('pred-api', 'mine')).map((r) => [r.item, r.outcome, r.compiled, r.equivalent]);
      expect(mine).toEqual(
        expect.arrayContaining([
          [a, 'compiled', true, true],
          [b, 'missing', false, null],
        ]),
      );
      const report = await app.inject({ method: 'GET', url: '/v1/sweeps/pred-api/report?format=json' });
      expect(report.statusCode).toBe(200);
      const data = report.json() as { comparisons: { a: string; b: string; metric: string }[] };
      // (Configurations in the report's order, which is by name here.)
      const paired = data.comparisons.filter(
        (cmp) => new Set([cmp.a, cmp.b]).size === 2 && [cmp.a, cmp.b].every((x) => x === 'zero' || x === 'mine'),
      );
      expect(paired.map((cmp) => cmp.metric)).toContain('typecheck@1');
    } finally {
      await app.close();
    }
  }, 300_000);
});
