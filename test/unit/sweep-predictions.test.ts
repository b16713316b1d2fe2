// Predictions files and predictions configurations: every line checked before a sweep starts,
// the first bad one named FILE:LINE: field: problem; lines naming items outside the selection
// ignored and counted; a configuration reads its file relative to the sweep file (or $DATA/…)
// and may set only the judge's settings; the file's content is part of the configuration hash.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ignoredNote, parsePredictions, PredictionsError, readPredictions } from '../../engines/sweeps/predictions';
import { parseSweep, readSweepFile, SweepFileError, type PredictionsSource } from '../../engines/sweeps/sweep-file';
import { configHash } from '../../engines/sweeps/config-hash';
import { sweepCells } from '../../client/sweeps';
import { recordFromResult, missingRecord } from '../../engines/sweeps/record';
import { computeSweepMetrics } from '../../engines/metrics/sweep-metrics';
import type { SweepRunRecord } from '../../common/sweep';
import { publicData } from '../helpers/public-data';

const SOURCE: PredictionsSource = { path: '/p/herald.jsonl', format: 'jsonl', fields: { id: 'name', statement: 'lean4', sample: 'k' } };
const ITEMS = ['A.one', 'A.two', 'A.three'];
const lines = (...rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n');
const parse = (text: string, source: PredictionsSource = SOURCE, samples = 2) => parsePredictions(text, source, { items: ITEMS, samples });

function problem(text: string, source: PredictionsSource = SOURCE, samples = 2): string {
  try {
    parse(text, source, samples);
  } catch (err) {
    expect(err).toBeInstanceOf(PredictionsError);
    return (err as Error).message;
  }
  throw new Error('expected the file to be refused');
}

describe('a predictions file', () => {
  it('maps each line to (item, sample, statement) through the configured fields', () => {
    const set = parse(
      lines(
        { name: 'A.one', k: 0, lean4: 'theorem a : True := by sorry' },
        '',
        { name: 'A.one', k: 1, lean4: 'theorem b : True := by sorry', score: 0.3 },
        { name: 'A.three', k: 0, lean4: 'theorem c : True := by sorry' },
      ),
    );
    expect(set.entries).toEqual([
      { item: 'A.one', sample: 0, statement: 'theorem a : True := by sorry' },
      { item: 'A.one', sample: 1, statement: 'theorem b : True := by sorry' },
      { item: 'A.three', sample: 0, statement: 'theorem c : True := by sorry' },
    ]);
    expect(set.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(set.ignored).toEqual({ lines: 0 });
    // Without a sample field, every line is sample 0.
    const plain = parse(lines({ name: 'A.two', lean4: 's' }), { ...SOURCE, fields: { id: 'name', statement: 'lean4' } });
    expect(plain.entries).toEqual([{ item: 'A.two', sample: 0, statement: 's' }]);
  });

  it('names the first bad line as FILE:LINE: field: problem', () => {
    const ok = { name: 'A.one', k: 0, lean4: 't' };
    expect(problem(lines(ok, '{"name": "A.two", '))).toBe('/p/herald.jsonl:2: (line): not JSON');
    expect(problem(lines(ok, '[1, 2]'))).toBe('/p/herald.jsonl:2: (line): not a JSON object');
    expect(problem(lines(ok, { k: 0, lean4: 't' }))).toBe('/p/herald.jsonl:2: name: missing (the item id)');
    expect(problem(lines({ name: 7, k: 0, lean4: 't' }))).toBe('/p/herald.jsonl:1: name: the item id is a number, not a string');
    expect(problem(lines({ name: ' ', k: 0, lean4: 't' }))).toBe('/p/herald.jsonl:1: name: the item id is empty');
    expect(problem(lines({ name: 'A.one', k: 0 }))).toBe('/p/herald.jsonl:1: lean4: missing (the Lean statement)');
    expect(problem(lines({ name: 'A.one', k: 0, lean4: { text: 't' } }))).toBe(
      '/p/herald.jsonl:1: lean4: the statement is an object, not a string',
    );
    expect(problem(lines({ name: 'A.one', k: 0, lean4: ['t'] }))).toBe('/p/herald.jsonl:1: lean4: the statement is a list, not a string');
    expect(problem(lines({ name: 'A.one', lean4: 't' }))).toBe('/p/herald.jsonl:1: k: missing (the sample index)');
    expect(problem(lines({ name: 'A.one', k: 0.5, lean4: 't' }))).toBe('/p/herald.jsonl:1: k: the sample index is not a whole number ≥ 0');
    expect(problem(lines({ name: 'A.one', k: '0', lean4: 't' }))).toBe('/p/herald.jsonl:1: k: the sample index is not a whole number ≥ 0');
    expect(problem(lines({ name: 'A.one', k: 2, lean4: 't' }))).toBe(
      '/p/herald.jsonl:1: k: sample 2 is out of range: the sweep has samples: 2 (indexes 0–1)',
    );
    expect(problem(lines(ok, { name: 'A.two', k: 0, lean4: 't' }, { name: 'A.one', k: 0, lean4: 'u' }))).toBe(
      '/p/herald.jsonl:3: name: the item and sample 0 repeat line 1 (item "A.one")',
    );
    expect(problem(lines({ name: 'A.one', k: 0, lean4: 'x'.repeat(30_001) }))).toMatch(
      /^\/p\/herald\.jsonl:1: lean4: 30001 characters, more than the screen admits \(30000\)/,
    );
  });

  it('ignores and counts lines naming items outside the selection, and refuses a file with none inside it', () => {
    const set = parse(
      lines(
        { name: 'Other.x', k: 0, lean4: 't' },
        { name: 'A.two', k: 0, lean4: 't' },
        { name: 'Other.y', k: 0, lean4: 't' },
        // A repeat is a repeat even outside the selection.
      ),
    );
    expect(set.entries).toHaveLength(1);
    expect(set.ignored).toEqual({ lines: 2, firstLine: 1 });
    expect(ignoredNote(set, 'herald.jsonl')).toBe(
      "herald.jsonl: 2 lines name items outside the sweep's selection and are ignored (the first: line 1)",
    );
    expect(problem(lines({ name: 'Other.x', k: 0, lean4: 't' }, { name: 'Other.x', k: 0, lean4: 'u' }))).toMatch(
      /:2: name: .* repeat line 1/,
    );
    expect(problem(lines({ name: 'Other.x', k: 0, lean4: 't' }))).toBe(
      '/p/herald.jsonl: no line names an item of the sweep\'s benchmark selection (item ids are read from the field "name")',
    );
    expect(problem('')).toMatch(/no line names an item/);
  });

  it('reads a file from disk and says when there is none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-predictions-'));
    const file = join(dir, 'p.jsonl');
    writeFileSync(file, lines({ name: 'A.one', k: 0, lean4: 't' }));
    expect((await readPredictions({ ...SOURCE, path: file }, { items: ITEMS, samples: 1 })).entries).toHaveLength(1);
    await expect(readPredictions({ ...SOURCE, path: join(dir, 'none.jsonl') }, { items: ITEMS, samples: 1 })).rejects.toThrow(
      `${join(dir, 'none.jsonl')}: cannot read the predictions file: no such file`,
    );
  });
});

describe('a predictions configuration in a sweep file', () => {
  const file = (configurations: unknown) => ({
    benchmark: { path: 'b.jsonl', format: 'rautoformalizer' },
    library: 'connf',
    samples: 2,
    configurations,
  });
  const herald = { predictions: { path: 'herald.jsonl', format: 'jsonl', fields: { id: 'name', statement: 'lean4', sample: 'k' } } };

  it('resolves its path as benchmark paths are, and keeps the judge settings', () => {
    const spec = parseSweep(
      file({
        drift: {},
        herald: { ...herald, judge: true, models: { judge: 'o3' } },
        kimina: { predictions: { ...herald.predictions, path: '$DATA/k.jsonl' } },
      }),
      '/tmp/s/sweep.yaml',
      { dataDir: '/data' },
    );
    expect(spec.configurations).toEqual([
      { name: 'drift', config: {} },
      {
        name: 'herald',
        config: { judge: true, models: { judge: 'o3' } },
        predictions: { ...herald.predictions, path: '/tmp/s/herald.jsonl' },
      },
      { name: 'kimina', config: {}, predictions: { ...herald.predictions, path: '/data/k.jsonl' } },
    ]);
  });

  it('refuses settings that do not apply to a file of statements, and other formats', () => {
    const refused = (configurations: unknown) => {
      try {
        parseSweep(file(configurations), 'sweep.yaml', { dataDir: '/data' });
      } catch (err) {
        expect(err).toBeInstanceOf(SweepFileError);
        return (err as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refused({ herald: { ...herald, topK: 5 } })).toMatch(
      /configurations\.herald\.topK: does not apply to a predictions configuration/,
    );
    expect(refused({ herald: { ...herald, models: { formalizer: 'x' } } })).toMatch(
      /configurations\.herald\.models\.formalizer: a predictions configuration calls only the judge/,
    );
    expect(refused({ herald: { predictions: { ...herald.predictions, format: 'csv' } } })).toMatch(
      /configurations\.herald\.predictions\.format/,
    );
    expect(refused({ herald: { predictions: { ...herald.predictions, fields: { id: 'name' } } } })).toMatch(
      /configurations\.herald\.predictions\.fields\.statement/,
    );
    expect(refused({ herald: { predictions: { ...herald.predictions, where: 'x' } } })).toMatch(/unknown field "where"/);
  });

  it('ships an example: a predictions file of gold statements beside DRIFT', async () => {
    const dir = fileURLToPath(new URL('../../sweeps/', import.meta.url));
    const spec = await readSweepFile(join(dir, 'connf-predictions.yaml'), { dataDir: publicData() });
    const gold = spec.configurations.find((c) => c.name === 'gold')!;
    expect(gold.predictions).toEqual({
      path: join(dir, 'connf-gold.predictions.jsonl'),
      format: 'jsonl',
      fields: { id: 'name', statement: 'lean4' },
    });
    const set = await readPredictions(gold.predictions!, { items: ['ConNF.mem_cloud', 'ConNF.cloud_empty', 'ConNF.other'], samples: 1 });
    expect(set.entries.map((e) => e.item)).toEqual(['ConNF.mem_cloud', 'ConNF.cloud_empty']);
    expect(set.ignored.lines).toBe(2);
  });

  it('hashes the file content into the configuration hash, so --reuse never matches another file', () => {
    const spec = parseSweep(file({ herald }), '/tmp/s/sweep.yaml', { dataDir: '/data' });
    const set = (text: string) => parsePredictions(text, spec.configurations[0]!.predictions!, { items: ['A.one'], samples: 2 });
    const one = sweepCells(spec, 'v1', new Map([['herald', set(lines({ name: 'A.one', k: 0, lean4: 't' }))]]));
    const same = sweepCells(spec, 'v1', new Map([['herald', set(lines({ name: 'A.one', k: 0, lean4: 't' }))]]));
    const other = sweepCells(spec, 'v1', new Map([['herald', set(lines({ name: 'A.one', k: 0, lean4: 'u' }))]]));
    expect(one[0]!.hash).toBe(same[0]!.hash);
    expect(one[0]!.hash).not.toBe(other[0]!.hash);
    // The index version and leave-out policy say nothing about a file's statements.
    const read = new Map([['herald', set(lines({ name: 'A.one', k: 0, lean4: 't' }))]]);
    expect(sweepCells({ ...spec, leaveOut: 'file' }, undefined, read)[0]!.hash).toBe(one[0]!.hash);
    expect(one[0]!.predictionsFile).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), statements: 1 });
    // Not the hash of a generated cell with the same (judge) settings.
    expect(one[0]!.hash).not.toBe(configHash({ config: {}, library: 'connf', indexVersion: 'v1', leaveOut: 'item' }));
    // A predictions configuration cannot start without its file read.
    expect(() => sweepCells(spec, 'v1')).toThrow(/its predictions file was not read/);
  });
});

describe('records of predictions units', () => {
  const id = {
    sweepId: 's',
    cell: { name: 'herald', hash: 'h' },
    item: { id: 'A.one', goldPremises: ['Nat.Prime'], tags: { split: 'dev' } },
    sample: 0,
    workflowId: 's/herald/A.one/0',
  };

  it('records a missing unit as a failure of every rate, left out of retrieval and latency', () => {
    const missing = missingRecord(id, new Date(0));
    expect(missing).toMatchObject({
      outcome: 'missing',
      source: 'predictions',
      compiled: false,
      checked: false,
      equivalent: null,
      faithful: null,
    });
    const evaluated = recordFromResult(
      { ...id, item: { ...id.item, id: 'A.two' }, workflowId: 's/herald/A.two/0' },
      {
        statement: 'informal',
        library: 'connf',
        config: {} as never,
        formalStatement: 'theorem t : True := by sorry',
        compiled: true,
        checked: true,
        outcome: 'faithful',
        attempts: [{ round: 0, statement: 'theorem t : True := by sorry', compile: { status: 'ok', messages: [], durationMs: 5 } }],
        judge: { grade: 10, faithful: true, explanation: '' },
        subqueries: [],
        premises: [],
        examples: [],
        notes: [],
        stages: ['compile', 'judge'],
        timings: { compile: 5, judge: 7 },
        source: 'predictions',
      },
      new Date(0),
    );
    expect(evaluated).toMatchObject({ source: 'predictions', outcome: 'faithful', stageMs: { compile: 5, judge: 7 } });
    const metrics = computeSweepMetrics([missing, evaluated] as SweepRunRecord[], { tags: false, resamples: 200 });
    const g = metrics.configs[0]!;
    expect(g).toMatchObject({ runs: 2, failedRuns: 0, missingRuns: 1, retrieval: null });
    expect(g.typecheck!.at1.estimate).toBe(0.5);
    expect(g.faithful!.at1.estimate).toBe(0.5);
    expect(g.latency.total?.runs).toBe(1);
  });
});
