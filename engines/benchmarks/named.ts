// Benchmarks by name, resolved in the public data directory by what it has: `data pull` from the
// source writes the full ConNF benchmark (connf/benchmark.jsonl), a mirror may hold only its
// development split (connf/benchmark.dev.jsonl). A sweep file, the CLI and the tests name
// `{ name: connf, split: dev }` and get the same items in the same order from either: the split's
// own file where there is one, else the full file filtered to the split's item names.
// docs/decisions/0020-benchmarks-by-data-dir.md.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchmarkFormat } from './formats';
import { CONNF_DEV_IDS, CONNF_DEV_SOURCE } from './splits/connf-dev';

export interface NamedSplit {
  /** The item names of the split, in order. */
  ids: readonly string[];
  /** The split's own file in the data directory, where a mirror has it. */
  file?: string;
}

export interface NamedBenchmark {
  name: string;
  format: BenchmarkFormat;
  /** The full benchmark's file in the data directory (as infra/public-data.ts pulls it). */
  file: string;
  splits: Record<string, NamedSplit>;
  /** The data set that `driftline data pull` fetches it with. */
  dataSet: string;
}

/** The benchmarks of the public data, by name. */
export const NAMED_BENCHMARKS: readonly NamedBenchmark[] = [
  {
    name: 'connf',
    format: 'rautoformalizer',
    file: 'connf/benchmark.jsonl',
    splits: { dev: { ids: CONNF_DEV_IDS, file: CONNF_DEV_SOURCE.path } },
    dataSet: 'connf',
  },
  { name: 'proofnet', format: 'rautoformalizer', file: 'proofnet/benchmark.jsonl', splits: {}, dataSet: 'proofnet' },
  { name: 'minif2f', format: 'deepseek', file: 'minif2f/minif2f.jsonl', splits: {}, dataSet: 'minif2f' },
];

export class NamedBenchmarkError extends Error {
  override name = 'NamedBenchmarkError';
}

/** Where a named benchmark's items come from in this data directory. */
export interface ResolvedBenchmark {
  path: string;
  format: BenchmarkFormat;
  /** Keep only these items, in this order (a split read from the full file, or checked in its own). */
  only?: { split: string; ids: readonly string[] };
  /** Tags every item gets: the split's name. */
  tags?: Record<string, string>;
}

const pullHint = (b: NamedBenchmark) =>
  `run \`npx driftline data pull ${b.dataSet}\` (from the source; or with DRIFTLINE_DATA_MIRROR set to a copy of the data)`;

/** Resolves `name` (and `split`) in `dataDir` by the files it has; throws, saying what is there
 * and what to do, when it has none that gives them. */
export function resolveNamedBenchmark(name: string, split: string | undefined, dataDir: string): ResolvedBenchmark {
  const b = NAMED_BENCHMARKS.find((n) => n.name === name);
  if (!b) throw new NamedBenchmarkError(`unknown benchmark "${name}"; known: ${NAMED_BENCHMARKS.map((n) => n.name).join(', ')}`);
  const full = join(dataDir, b.file);
  if (split === undefined) {
    if (existsSync(full)) return { path: full, format: b.format };
    const partial = Object.entries(b.splits).find(([, s]) => s.file && existsSync(join(dataDir, s.file)));
    if (partial)
      throw new NamedBenchmarkError(
        `benchmark "${name}": the data directory ${dataDir} has only its ${partial[0]} split (${partial[1].file}, from a mirror), not the whole benchmark (${b.file}); ` +
          `name the split (split: ${partial[0]}), or ${pullHint(b)}`,
      );
    throw new NamedBenchmarkError(`benchmark "${name}": ${full} does not exist; ${pullHint(b)}`);
  }
  const s = b.splits[split];
  if (!s) {
    const known = Object.keys(b.splits);
    throw new NamedBenchmarkError(
      `benchmark "${name}" has no split "${split}"; ${known.length ? `known: ${known.join(', ')}` : 'it has none: leave split out for the whole benchmark'}`,
    );
  }
  const only = { split, ids: s.ids };
  const tags = { split };
  if (s.file && existsSync(join(dataDir, s.file))) return { path: join(dataDir, s.file), format: b.format, only, tags };
  if (existsSync(full)) return { path: full, format: b.format, only, tags };
  throw new NamedBenchmarkError(
    `benchmark "${name}" split ${split}: the data directory ${dataDir} has neither ${b.file}${s.file ? ` nor ${s.file}` : ''}; ${pullHint(b)}`,
  );
}

/** The items of a split, in the split's order; the file must hold every one of them. */
export function itemsOfSplit<T>(items: readonly T[], idOf: (item: T) => string, only: { split: string; ids: readonly string[] }): T[] {
  const byId = new Map(items.map((item) => [idOf(item), item]));
  const missing = only.ids.filter((id) => !byId.has(id));
  if (missing.length)
    throw new NamedBenchmarkError(
      `lacks ${missing.length} of the ${only.ids.length} items of the ${only.split} split (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}): not the file the split was taken from`,
    );
  return only.ids.map((id) => byId.get(id)!);
}

/** `name` or `name:split` (`connf:dev`), as the CLI's `--benchmark` takes a named benchmark. */
export function parseBenchmarkName(text: string): { name: string; split?: string } | undefined {
  const m = /^([a-z][a-z0-9-]*)(?::([a-z][a-z0-9-]*))?$/.exec(text);
  if (!m || !NAMED_BENCHMARKS.some((b) => b.name === m[1])) return undefined;
  return { name: m[1]!, ...(m[2] ? { split: m[2] } : {}) };
}
