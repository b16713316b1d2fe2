// Loads a benchmark file into items: every line validated before anything runs, so a bad
// record stops a sweep before it starts, with the file and line that are wrong.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { BenchmarkItem } from '../../common/sweep';
import { BadRecord, parseRecord, type BenchmarkFormat, type FieldMap } from './formats';
import { selectItems, type Selection } from './select';

export interface BenchmarkSource extends Selection {
  path: string;
  format: BenchmarkFormat;
  /** For the `jsonl` format. */
  fields?: FieldMap;
  /** Tags every item of this file gets (added to what the file says). */
  tags?: Record<string, string>;
}

export class BenchmarkError extends Error {
  override name = 'BenchmarkError';
}

/** `benchmark.dev.jsonl` → `dev`: the split a RAutoformalizer file name carries. */
function splitFromFileName(path: string): string | undefined {
  const m = /\.(dev|test|valid|validation|train)\.jsonl$/i.exec(basename(path));
  return m?.[1]?.toLowerCase();
}

export async function loadBenchmark(source: BenchmarkSource): Promise<BenchmarkItem[]> {
  let text: string;
  try {
    text = await readFile(source.path, 'utf8');
  } catch (err) {
    throw new BenchmarkError(`cannot read benchmark ${source.path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  const split = splitFromFileName(source.path);
  const ctx = { tags: { ...(split ? { split } : {}), ...(source.tags ?? {}) }, ...(source.fields ? { fields: source.fields } : {}) };
  const items: BenchmarkItem[] = [];
  const lineOf = new Map<string, number>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const where = `${source.path}:${i + 1}`;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      throw new BenchmarkError(`${where}: not JSON (${(err as Error).message})`);
    }
    let item: BenchmarkItem;
    try {
      item = parseRecord(source.format, raw, ctx);
    } catch (err) {
      if (err instanceof BadRecord) throw new BenchmarkError(`${where}: ${err.message} (format ${source.format})`);
      throw err;
    }
    const seen = lineOf.get(item.id);
    if (seen !== undefined) throw new BenchmarkError(`${where}: item id "${item.id}" repeats line ${seen}`);
    lineOf.set(item.id, i + 1);
    items.push(item);
  }
  if (items.length === 0) throw new BenchmarkError(`benchmark ${source.path} has no items`);
  try {
    return selectItems(items, source);
  } catch (err) {
    throw new BenchmarkError(`${source.path}: ${(err as Error).message}`);
  }
}

/** Several benchmark files as one list; ids must stay unique across them. */
export async function loadBenchmarks(sources: BenchmarkSource[]): Promise<BenchmarkItem[]> {
  const all: BenchmarkItem[] = [];
  const from = new Map<string, string>();
  for (const source of sources) {
    for (const item of await loadBenchmark(source)) {
      const other = from.get(item.id);
      if (other) throw new BenchmarkError(`item id "${item.id}" is in both ${other} and ${source.path}`);
      from.set(item.id, source.path);
      all.push(item);
    }
  }
  return all;
}
