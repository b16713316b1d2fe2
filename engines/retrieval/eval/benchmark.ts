// Benchmark items for retrieval evaluation (`*/benchmark*.jsonl`: full_name, informal_stmt,
// mathlib_dependencies, …), validated line by line; errors name the file and line.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { itemsOfSplit, resolveNamedBenchmark } from '../../benchmarks/named';

export const BenchmarkLineSchema = z.object({
  full_name: z.string().min(1),
  informal_stmt: z.string(),
  formal_stmt: z.string().optional(),
  mathlib_dependencies: z.array(z.string()).default([]),
});

export interface BenchmarkItem {
  /** Full name of the item (excluded from its own retrieval). */
  name: string;
  statement: string;
  gold: string[];
}

export async function loadBenchmark(path: string): Promise<BenchmarkItem[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read benchmark ${path}: ${(e as Error).message}`);
  }
  const items: BenchmarkItem[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      throw new Error(`${path}:${i + 1}: not JSON (${(e as Error).message})`);
    }
    const r = BenchmarkLineSchema.safeParse(raw);
    if (!r.success) throw new Error(`${path}:${i + 1}: ${z.prettifyError(r.error)}`);
    items.push({ name: r.data.full_name, statement: r.data.informal_stmt, gold: [...new Set(r.data.mathlib_dependencies)] });
  });
  if (items.length === 0) throw new Error(`benchmark ${path} has no items`);
  return items;
}

/** A benchmark of the public data by name (`connf`, split `dev`), by what `dataDir` has
 * (engines/benchmarks/named.ts): the same items from the source's full file or a mirror's split. */
export async function loadNamedBenchmark(name: string, split: string | undefined, dataDir: string): Promise<BenchmarkItem[]> {
  const found = resolveNamedBenchmark(name, split, dataDir);
  const items = await loadBenchmark(found.path);
  return found.only ? itemsOfSplit(items, (i) => i.name, found.only) : items;
}
