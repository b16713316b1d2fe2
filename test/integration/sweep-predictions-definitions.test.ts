// A predictions file whose statements carry the definitions they need (issue 34), swept as a
// user would (`driftline sweep start`) over real ConNF dev items, by the real workers against
// the fake LLM and the fake REPL: the whole text is screened by the same function as a run's,
// compiled, judged, recorded, exported and shown in the report; a statement using a name it never
// defines is Lean's error, and a definition that would run code is refused before Lean. The same
// file screened offline with `driftline screen` gives the same verdicts.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { BenchmarkItem, SweepProgress, SweepRunRecord } from '../../common/sweep';
import { loadBenchmark } from '../../engines/benchmarks/load';
import { sweepReportInput } from '../../client/sweep-report';
import { renderSweepReportAs } from '../../engines/report/write-report';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { publicData } from '../helpers/public-data';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/cli.ts', import.meta.url));

let DATA: string;
let env: TestWorkflowEnvironment;
let stack: TestStack;
let dir: string;
let items: BenchmarkItem[];

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

beforeAll(async () => {
  DATA = publicData();
  items = await loadBenchmark({ path: join(DATA, 'connf', 'benchmark.dev.jsonl'), format: 'rautoformalizer', limit: 2 });
  env = await startTemporal();
  stack = await createStack(env, {
    queue: 'default',
    library: { name: 'connf', corpusPath: join(DATA, 'connf', 'library.jsonl') },
    // A user's own names exist only where the text defines them.
    repl: { userNames: 'answer_\\w+' },
  });
  dir = mkdtempSync(join(tmpdir(), 'driftline-predictions-defs-'));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

describe('a predictions file with definitions', () => {
  it('is screened, compiled, judged, recorded and reported with its definitions', async () => {
    const [a, b] = items.map((i) => i.id) as [string, string];
    const gold = (id: string) => items.find((i) => i.id === id)!.goldStatement!;
    const withDef = `def answer_bound : ℕ := 2\n\n${gold(a)}`;
    const usesAbbrev = 'abbrev answer_set : Set ℕ := {2, 3}\n\ntheorem uses_answer : answer_set = {3, 2} := by sorry';
    const undefinedName = 'theorem uses_missing : answer_missing = ({2, 3} : Set ℕ) := by sorry';
    const hostileDef = `@[implemented_by answer_impl] def answer_bound : ℕ := 2\n\n${gold(b)}`;
    const rows = [
      { name: a, k: 0, lean4: withDef },
      { name: a, k: 1, lean4: usesAbbrev },
      { name: b, k: 0, lean4: undefinedName },
      { name: b, k: 1, lean4: hostileDef },
    ];
    const predictions = join(dir, 'defs.jsonl');
    writeFileSync(predictions, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const sweep = join(dir, 'sweep.yaml');
    writeFileSync(
      sweep,
      [
        'benchmark: {path: $DATA/connf/benchmark.dev.jsonl, format: rautoformalizer, limit: 2}',
        'library: connf',
        'samples: 2',
        'window: 4',
        'configurations:',
        '  defs: {predictions: {path: defs.jsonl, format: jsonl, fields: {id: name, statement: lean4, sample: k}}, judge: true}',
        '',
      ].join('\n'),
    );

    // The offline screen says beforehand what the sweep's screen will: the same function.
    const toScreen = join(dir, 'defs-screen.jsonl');
    writeFileSync(toScreen, rows.map((r) => JSON.stringify({ id: `${r.name}/${r.k}`, statement: r.lean4 })).join('\n') + '\n');
    const screened = await cli('screen', toScreen, '--json');
    expect(screened.code, screened.stderr).toBe(0);
    const verdicts = screened.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { accepted: boolean; reason?: string });
    expect(verdicts.map((v) => v.accepted)).toEqual([true, true, true, false]);
    expect(verdicts[3]!.reason).toMatch(/implemented_by/);

    const started = await cli('sweep', 'start', sweep, '--id', 'defs-sweep');
    expect(started.code, started.stderr).toBe(0);
    const final = await stack.withWorkers(() => stack.client.workflow.getHandle('defs-sweep').result() as Promise<SweepProgress>);
    expect(final).toMatchObject({ status: 'completed', total: 4, done: 4, failed: 0 });

    const runs = await stack.results.runs('defs-sweep');
    const unit = (item: string, sample: number) => runs.find((r) => r.item === item && r.sample === sample)!;
    // Compiled with their definitions, and judged; the record keeps the whole text.
    for (const [r, text] of [
      [unit(a, 0), withDef],
      [unit(a, 1), usesAbbrev],
    ] as const) {
      expect(r).toMatchObject({ source: 'predictions', compiled: true, checked: true, formalStatement: text });
      expect(r.judgeGrade).toEqual(expect.any(Number));
      expect(['faithful', 'unfaithful']).toContain(r.outcome);
      expect(r.attempts).toEqual([{ round: 0, compiled: true, status: 'ok' }]);
    }
    // A name nothing defines: Lean's error, not the screen's.
    expect(unit(b, 0)).toMatchObject({ outcome: 'not-compiled', compiled: false, checked: true, faithful: false });
    // A definition that would run code: refused before Lean, never sent.
    expect(unit(b, 1)).toMatchObject({ outcome: 'refused', compiled: false, checked: false, faithful: false });
    expect(unit(b, 1).refusal).toMatch(/implemented_by/);
    expect(stack.repl!.leaks()).toEqual([]);
    const begun = stack.repl!.events().filter((e) => e.event === 'begin');
    expect(begun.some((e) => e.detail.includes('uses_answer'))).toBe(true);

    // Exported and reported with the definitions.
    const exported = await cli('sweep', 'export', 'defs-sweep', '--format', 'jsonl');
    expect(exported.code, exported.stderr).toBe(0);
    const rowsOut = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SweepRunRecord);
    expect(rowsOut.find((r) => r.item === a && r.sample === 1)!.formalStatement).toBe(usesAbbrev);
    const input = (await sweepReportInput(stack.results, 'defs-sweep', { status: final.status }))!;
    const html = await renderSweepReportAs(input, 'html');
    expect(html).toContain('abbrev answer_set : Set ℕ := {2, 3}');
    expect(html).toContain('def answer_bound : ℕ := 2');
  }, 600_000);
});
