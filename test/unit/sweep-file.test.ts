// The sweep file: YAML or JSON, one schema, errors that name the bad field's path, factorial
// designs expanded into named cells, and the example files shipped in sweeps/.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expandFactorial, parseSweep, readSweepFile } from '../../engines/sweeps/sweep-file';
import { canonicalJson, configHash } from '../../engines/sweeps/config-hash';
import { DEFAULT_RUN_CONFIG } from '../../common/run-config-schema';
import { factorialDesign } from '../../client/sweep-report';
import { RunConfigPatchSchema } from '../../common/run-config-schema';
import { RunConfigFields } from '../../engines/sweeps/sweep-file';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import { publicData } from '../helpers/public-data';

const DATA = '/data';
const parse = (raw: unknown) => parseSweep(raw, 'sweep.yaml', { dataDir: DATA });
const minimal = {
  benchmark: { path: 'b.jsonl', format: 'rautoformalizer', limit: 10 },
  library: 'connf',
  samples: 2,
  window: 4,
  configurations: { drift: {} },
};

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'driftline-sweepfile-'));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('sweep file', () => {
  it('accepts the contract shape and fills defaults', () => {
    const spec = parse(minimal);
    expect(spec).toMatchObject({
      library: 'connf',
      samples: 2,
      window: 4,
      maxAttempts: 2,
      leaveOut: 'item',
      configurations: [{ name: 'drift', config: {} }],
    });
    expect(spec.benchmarks[0]).toMatchObject({ format: 'rautoformalizer', limit: 10 });
    expect(spec.benchmarks[0]!.path).toMatch(/\/b\.jsonl$/);
  });

  it('resolves $DATA/ paths against the shared data directory and others against the file', () => {
    const spec = parseSweep(
      {
        ...minimal,
        benchmark: [
          { path: '$DATA/connf/x.jsonl', format: 'rautoformalizer' },
          { path: 'rel.jsonl', format: 'deepseek' },
        ],
      },
      '/tmp/s/sweep.json',
      { dataDir: DATA },
    );
    expect(spec.benchmarks.map((b) => b.path)).toEqual(['/data/connf/x.jsonl', '/tmp/s/rel.jsonl']);
  });

  it('names the path of a bad field', () => {
    expect(() => parse({ ...minimal, configurations: { drift: { topK: 0 } } })).toThrow(/configurations\.drift\.topK: /);
    expect(() => parse({ ...minimal, configurations: { drift: { retrieval: 'magic' } } })).toThrow(/configurations\.drift\.retrieval: /);
    expect(() => parse({ ...minimal, configurations: { drift: { temperture: 1 } } })).toThrow(
      /configurations\.drift: unknown field "temperture"/,
    );
    expect(() => parse({ ...minimal, benchmark: { path: 'b', format: 'csv' } })).toThrow(/benchmark\.format: /);
    expect(() => parse({ ...minimal, benchmark: [{ path: 'b', format: 'jsonl' }] })).toThrow(
      /benchmark\[0\]\.fields: the jsonl format needs "fields"/,
    );
    expect(() => parse({ ...minimal, samples: 0 })).toThrow(/samples: /);
    expect(() => parse({ ...minimal, retry: { maxAttempts: 'x' } })).toThrow(/retry\.maxAttempts: /);
    expect(() => parse({ ...minimal, configurations: { 'a/b': {} } })).toThrow(/configurations\.a\/b: .*no "\/"/);
    expect(() => parse({ benchmark: minimal.benchmark, library: 'connf' })).toThrow(/configurations: declare "configurations"/);
    expect(() => parse({ ...minimal, benchmark: { path: 'b', format: 'rautoformalizer', seed: 3 } })).toThrow(
      /benchmark\.seed: a seeded sample needs "limit"/,
    );
  });

  it('expands a factorial design into named cells, first factor slowest', () => {
    const cells = expandFactorial({
      base: { retrieval: 'drift' },
      factors: { decompose: { on: { decompose: true }, off: { decompose: false } }, repairRounds: [0, 3] },
    });
    expect(cells.map((c) => c.name)).toEqual([
      'decompose=on,repairRounds=0',
      'decompose=on,repairRounds=3',
      'decompose=off,repairRounds=0',
      'decompose=off,repairRounds=3',
    ]);
    expect(cells[2]).toEqual({
      name: 'decompose=off,repairRounds=0',
      config: { retrieval: 'drift', decompose: false, repairRounds: 0 },
      factors: { decompose: 'off', repairRounds: '0' },
    });
    expect(() => expandFactorial({ factors: { topK: [1, 'x'] } })).toThrow(/factorial\.factors\.topK: "x" is not a value/);
  });

  it('reads YAML and JSON files; a syntax error names the file', async () => {
    const yaml = tempFile(
      's.yaml',
      'benchmark: {path: b.jsonl, format: deepseek}\nlibrary: connf\nconfigurations:\n  zero: {retrieval: none}\n',
    );
    expect((await readSweepFile(yaml, { dataDir: DATA })).configurations).toEqual([{ name: 'zero', config: { retrieval: 'none' } }]);
    const json = tempFile('s.json', JSON.stringify(minimal));
    expect((await readSweepFile(json, { dataDir: DATA })).samples).toBe(2);
    const broken = tempFile('s.yaml', 'benchmark: [unclosed\n');
    await expect(readSweepFile(broken, { dataDir: DATA })).rejects.toThrow(/s\.yaml: not valid YAML/);
  });

  it('ships the DRIFT ablation table and the 2×2×2 factorial as examples', async () => {
    const dir = fileURLToPath(new URL('../../sweeps/', import.meta.url));
    const ablation = await readSweepFile(join(dir, 'connf-drift-ablation.yaml'), { dataDir: publicData() });
    expect(ablation.configurations.map((c) => c.name)).toEqual([
      'drift',
      'no-decompose',
      'no-illustrate',
      'no-retrieval',
      'monolithic-top5',
      'oracle',
      'zero-shot',
    ]);
    // Named, resolved in the data directory setup pulled: the dev split from whichever file it has.
    expect(ablation.benchmarks[0]!).toMatchObject({ name: 'connf', split: 'dev', format: 'rautoformalizer', limit: 100 });
    const items = await loadBenchmarks(ablation.benchmarks);
    expect(items).toHaveLength(100);
    expect(items[0]).toMatchObject({ id: 'ConNF.mem_cloud', tags: { split: 'dev' } });
    const factorial = await readSweepFile(join(dir, 'factorial-2x2x2.yaml'), { dataDir: publicData() });
    expect(factorial.configurations).toHaveLength(8);
    expect(factorial.configurations[7]).toMatchObject({
      name: 'decompose=off,illustrate=off,repair=off',
      config: { retrieval: 'drift', decompose: false, illustrate: false, repairRounds: 0 },
    });
    const smoke = await readSweepFile(join(dir, 'connf-smoke.json'), { dataDir: publicData() });
    expect(smoke.configurations).toHaveLength(2);
    expect((await loadBenchmarks(smoke.benchmarks)).map((i) => i.id)).toEqual(items.slice(0, 5).map((i) => i.id));
  });

  it('hashes what affects results: defaults spelled out or not hash alike, any change differs', () => {
    const base = { config: {}, library: 'connf', indexVersion: 'v1', leaveOut: 'item' as const };
    expect(configHash(base)).toBe(configHash({ ...base, config: { ...DEFAULT_RUN_CONFIG } }));
    expect(configHash(base)).not.toBe(configHash({ ...base, config: { topK: 6 } }));
    expect(configHash(base)).not.toBe(configHash({ ...base, indexVersion: 'v2' }));
    expect(configHash(base)).not.toBe(configHash({ ...base, leaveOut: 'file' }));
    expect(configHash(base)).not.toBe(configHash({ ...base, library: 'other' }));
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });

  it('turns factorial cells into the report\'s 2^n design, "off" levels as 0', () => {
    const cells = expandFactorial({
      factors: { decompose: { on: { decompose: true }, off: { decompose: false } }, repairRounds: [0, 3] },
    }).map((c) => ({ ...c, hash: 'h' }));
    expect(factorialDesign({ cells })).toEqual({
      factors: [
        { name: 'decompose', low: 'off', high: 'on' },
        { name: 'repairRounds', low: '0', high: '3' },
      ],
      cells: {
        'decompose=on,repairRounds=0': { decompose: 1, repairRounds: 0 },
        'decompose=on,repairRounds=3': { decompose: 1, repairRounds: 1 },
        'decompose=off,repairRounds=0': { decompose: 0, repairRounds: 0 },
        'decompose=off,repairRounds=3': { decompose: 0, repairRounds: 1 },
      },
    });
    // Three levels, or no factors at all: no 2^n design.
    const three = expandFactorial({ factors: { topK: [1, 5, 10] } }).map((c) => ({ ...c, hash: 'h' }));
    expect(factorialDesign({ cells: three })).toBeUndefined();
    expect(factorialDesign({ cells: [{ name: 'drift', config: {}, hash: 'h' }] })).toBeUndefined();
  });

  it("takes exactly the fields the API's config takes, agent mode included", () => {
    const zodKeys = Object.keys(RunConfigFields.shape).sort();
    expect(zodKeys).toEqual(Object.keys(RunConfigPatchSchema.properties).sort());
    expect(
      parse({ ...minimal, configurations: { agent: { mode: 'agent', tools: ['write_file', 'run_lean'], maxSteps: 12 } } })
        .configurations[0]!.config,
    ).toMatchObject({ mode: 'agent', maxSteps: 12 });
    expect(() => parse({ ...minimal, configurations: { agent: { mode: 'agent', tools: ['run_lean'] } } })).toThrow(
      /configurations\.agent: "tools" must include "write_file"/,
    );
  });
});
