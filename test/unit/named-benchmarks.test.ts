// Benchmarks by name (engines/benchmarks/named.ts): ConNF's dev split gives the same items in the
// same order from a data directory that pulled the full benchmark from the source and from one
// that a mirror filled with the dev file alone; what a directory lacks is said with what to do.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBenchmark } from '../../engines/benchmarks/load';
import { NAMED_BENCHMARKS, parseBenchmarkName, resolveNamedBenchmark } from '../../engines/benchmarks/named';
import { loadNamedBenchmark } from '../../engines/retrieval/eval/benchmark';
import { CONNF_DEV_IDS, CONNF_DEV_SOURCE } from '../../engines/benchmarks/splits/connf-dev';
import { parseSweep } from '../../engines/sweeps/sweep-file';
import { DATA_SETS } from '../../infra/public-data';
import { benchmarkRecords, publicData } from '../helpers/public-data';

const jsonl = (records: object[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** A data directory with these files (path in the data directory → records). */
function dataDir(files: Record<string, object[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'named-benchmarks-'));
  for (const [path, records] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), jsonl(records));
  }
  return dir;
}

/** The full benchmark as the source has it: the dev items among others, in another order. */
function fullBenchmark(dev: Record<string, unknown>[]): Record<string, unknown>[] {
  const others = dev.slice(0, 40).map((r, i) => ({ ...r, full_name: `ConNF.not_in_dev_${i}` }));
  const mixed: Record<string, unknown>[] = [];
  [...dev].reverse().forEach((r, i) => {
    mixed.push(r);
    if (i < others.length) mixed.push(others[i]!);
  });
  return mixed;
}

describe('a named benchmark', () => {
  const dev = benchmarkRecords('connf', 'dev');

  it('gives the dev split alike from the full file of the source and from a mirror’s dev file', async () => {
    const fromSource = dataDir({ 'connf/benchmark.jsonl': fullBenchmark(dev) });
    const fromMirror = dataDir({ 'connf/benchmark.dev.jsonl': dev });
    const a = resolveNamedBenchmark('connf', 'dev', fromSource);
    const b = resolveNamedBenchmark('connf', 'dev', fromMirror);
    expect(a.path).toBe(join(fromSource, 'connf/benchmark.jsonl'));
    expect(b.path).toBe(join(fromMirror, 'connf/benchmark.dev.jsonl'));
    const itemsA = await loadBenchmark({ ...a, limit: 100 });
    const itemsB = await loadBenchmark({ ...b, limit: 100 });
    expect(itemsA).toEqual(itemsB);
    expect(itemsA.map((i) => i.id)).toEqual(CONNF_DEV_IDS.slice(0, 100));
    expect(itemsA[0]!.tags).toMatchObject({ split: 'dev' });
    const allA = await loadBenchmark({ ...a, seed: 7, limit: 20 });
    expect(allA).toEqual(await loadBenchmark({ ...b, seed: 7, limit: 20 }));
    // The whole benchmark is only where the source's file is.
    expect((await loadBenchmark(resolveNamedBenchmark('connf', undefined, fromSource))).length).toBe(dev.length + 40);
  });

  it('says what the data directory has and what to do when it lacks the benchmark', () => {
    const fromMirror = dataDir({ 'connf/benchmark.dev.jsonl': dev.slice(0, 3) });
    expect(() => resolveNamedBenchmark('connf', undefined, fromMirror)).toThrow(
      /has only its dev split \(connf\/benchmark\.dev\.jsonl, from a mirror\), not the whole benchmark \(connf\/benchmark\.jsonl\); name the split \(split: dev\), or run `npx driftline data pull connf`/,
    );
    const empty = dataDir({});
    expect(() => resolveNamedBenchmark('connf', 'dev', empty)).toThrow(
      /has neither connf\/benchmark\.jsonl nor connf\/benchmark\.dev\.jsonl; run `npx driftline data pull connf`/,
    );
    expect(() => resolveNamedBenchmark('mathlib', undefined, empty)).toThrow(
      /unknown benchmark "mathlib"; known: connf, proofnet, minif2f/,
    );
    expect(() => resolveNamedBenchmark('connf', 'test', empty)).toThrow(/no split "test"; known: dev/);
    expect(() => resolveNamedBenchmark('proofnet', 'dev', empty)).toThrow(/it has none: leave split out/);
  });

  it('refuses a file that lacks items of the split, naming them', async () => {
    const partial = dataDir({ 'connf/benchmark.jsonl': dev.slice(1) });
    await expect(loadBenchmark(resolveNamedBenchmark('connf', 'dev', partial))).rejects.toThrow(
      new RegExp(`lacks 1 of the ${CONNF_DEV_IDS.length} items of the dev split \\(ConNF\\.mem_cloud\\)`),
    );
  });

  it('is written in a sweep file as name and split, or as path and format, never both', () => {
    const dir = dataDir({ 'connf/benchmark.dev.jsonl': dev.slice(0, 3) });
    const sweep = (benchmark: object) => parseSweep({ benchmark, library: 'connf', configurations: { a: {} } }, 's.yaml', { dataDir: dir });
    expect(sweep({ name: 'connf', split: 'dev', limit: 2 }).benchmarks[0]).toMatchObject({
      path: join(dir, 'connf/benchmark.dev.jsonl'),
      format: 'rautoformalizer',
      tags: { split: 'dev' },
      limit: 2,
    });
    expect(() => sweep({ name: 'connf', path: 'x.jsonl', format: 'rautoformalizer' })).toThrow(/one of the two/);
    expect(() => sweep({ path: 'x.jsonl' })).toThrow(/needs "format"/);
    expect(() => sweep({ path: 'x.jsonl', format: 'rautoformalizer', split: 'dev' })).toThrow(/"split" goes with "name"/);
    expect(() => sweep({ name: 'connf' })).toThrow(/s\.yaml: benchmark: benchmark "connf": .* has only its dev split/);
  });

  it('is named on the command line as name or name:split, and the retrieval evaluation reads it alike', async () => {
    expect(parseBenchmarkName('connf:dev')).toEqual({ name: 'connf', split: 'dev' });
    expect(parseBenchmarkName('proofnet')).toEqual({ name: 'proofnet' });
    expect(parseBenchmarkName('bench.jsonl')).toBeUndefined();
    expect(parseBenchmarkName('mathlib:dev')).toBeUndefined();
    const fromSource = dataDir({ 'connf/benchmark.jsonl': fullBenchmark(dev) });
    const fromMirror = dataDir({ 'connf/benchmark.dev.jsonl': dev });
    const a = await loadNamedBenchmark('connf', 'dev', fromSource);
    expect(a).toEqual(await loadNamedBenchmark('connf', 'dev', fromMirror));
    expect(a.map((i) => i.name)).toEqual(CONNF_DEV_IDS);
  });

  it('names the files infra/public-data.ts pulls, and the split list matches the mirror file it came from', () => {
    const pulled = DATA_SETS.flatMap((d) => d.files.flatMap((f) => [f.path, ...(f.mirrorAlternative ? [f.mirrorAlternative.path] : [])]));
    for (const b of NAMED_BENCHMARKS) {
      expect(pulled).toContain(b.file);
      for (const s of Object.values(b.splits)) if (s.file) expect(pulled).toContain(s.file);
    }
    const connf = DATA_SETS.find((d) => d.name === 'connf')!.files.find((f) => f.mirrorAlternative)!;
    expect(connf.mirrorAlternative).toMatchObject(CONNF_DEV_SOURCE);
    expect(new Set(CONNF_DEV_IDS).size).toBe(CONNF_DEV_IDS.length);
    // Where setup pulled the dev file itself (a mirror), it holds exactly the list's items, in its order.
    const devFile = join(publicData(), CONNF_DEV_SOURCE.path);
    if (existsSync(devFile))
      expect(
        readFileSync(devFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { full_name: string }).full_name),
      ).toEqual(CONNF_DEV_IDS);
  });
});
