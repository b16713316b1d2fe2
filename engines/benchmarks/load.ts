// Loads a benchmark file into items: every line validated before anything runs, so a bad
// record stops a sweep before it starts, with the file and line that are wrong.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { BenchmarkItem } from '../../common/sweep';
import { BadRecord, parseRecord, type BenchmarkFormat, type FieldMap } from './formats';
import { itemsOfSplit } from './named';
import { selectItems, type Selection } from './select';

export interface BenchmarkSource extends Selection {
  path: string;
  format: BenchmarkFormat;
  /** For the `jsonl` format. */
  fields?: FieldMap;
  /** Tags every item of this file gets (added to what the file says). */
  tags?: Record<string, string>;
  /** A named benchmark's split (engines/benchmarks/named.ts): only these items, in this order,
   * before the selection; every one of them must be in the file. */
  only?: { split: string; ids: readonly string[] };
  /** The benchmark's name and split as the sweep file gave them, when it named one. */
  name?: string;
  split?: string;
}

/** What went wrong, without the file's contents: what the HTTP API says (it names the file as
 * the client gave it; the message, for the CLI, may quote the file). */
export type BenchmarkProblem =
  | { kind: 'unreadable'; missing: boolean }
  | { kind: 'not-json'; line: number }
  | { kind: 'bad-record'; line: number; fields: string[] }
  | { kind: 'repeated-id'; line: number; firstLine: number }
  | { kind: 'empty' }
  /** The selection asks for what the file lacks; `detail` names only the selection's own ids. */
  | { kind: 'selection'; detail: string }
  | { kind: 'repeated-across'; otherPath: string };

export class BenchmarkError extends Error {
  override name = 'BenchmarkError';
  constructor(
    message: string,
    /** The benchmark path the problem is in (as loaded), when it is about one file. */
    readonly path?: string,
    readonly problem?: BenchmarkProblem,
  ) {
    super(message);
  }
}

/** The problem in words that quote nothing of the file, naming files by `name(path)`. */
export function contentFreeMessage(err: BenchmarkError, name: (path: string) => string): string {
  const p = err.problem;
  const file = err.path !== undefined ? name(err.path) : 'benchmark';
  if (!p) return `${file}: cannot be used as a benchmark`;
  switch (p.kind) {
    case 'unreadable':
      return `cannot read benchmark ${file}: ${p.missing ? 'no such file' : 'not a readable file'}`;
    case 'not-json':
      return `${file}:${p.line}: not a JSON record`;
    case 'bad-record':
      return `${file}:${p.line}: not a record of the benchmark's format${p.fields.length ? ` (look at ${p.fields.join(', ')})` : ''}`;
    case 'repeated-id':
      return `${file}:${p.line}: repeats the item id of line ${p.firstLine}`;
    case 'empty':
      return `benchmark ${file} has no items`;
    case 'selection':
      return `${file}: ${p.detail}`;
    case 'repeated-across':
      return `an item id of ${file} is also in ${name(p.otherPath)}`;
  }
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
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new BenchmarkError(`cannot read benchmark ${source.path}: ${missing ? 'no such file' : (err as Error).message}`, source.path, {
      kind: 'unreadable',
      missing,
    });
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
      throw new BenchmarkError(`${where}: not JSON (${(err as Error).message})`, source.path, { kind: 'not-json', line: i + 1 });
    }
    let item: BenchmarkItem;
    try {
      item = parseRecord(source.format, raw, ctx);
    } catch (err) {
      if (err instanceof BadRecord)
        throw new BenchmarkError(`${where}: ${err.message} (format ${source.format})`, source.path, {
          kind: 'bad-record',
          line: i + 1,
          fields: err.fields,
        });
      throw err;
    }
    const seen = lineOf.get(item.id);
    if (seen !== undefined)
      throw new BenchmarkError(`${where}: item id "${item.id}" repeats line ${seen}`, source.path, {
        kind: 'repeated-id',
        line: i + 1,
        firstLine: seen,
      });
    lineOf.set(item.id, i + 1);
    items.push(item);
  }
  if (items.length === 0) throw new BenchmarkError(`benchmark ${source.path} has no items`, source.path, { kind: 'empty' });
  try {
    return selectItems(source.only ? itemsOfSplit(items, (i) => i.id, source.only) : items, source);
  } catch (err) {
    throw new BenchmarkError(`${source.path}: ${(err as Error).message}`, source.path, {
      kind: 'selection',
      detail: (err as Error).message,
    });
  }
}

/** Several benchmark files as one list; ids must stay unique across them. */
export async function loadBenchmarks(sources: BenchmarkSource[]): Promise<BenchmarkItem[]> {
  const all: BenchmarkItem[] = [];
  const from = new Map<string, string>();
  for (const source of sources) {
    for (const item of await loadBenchmark(source)) {
      const other = from.get(item.id);
      if (other)
        throw new BenchmarkError(`item id "${item.id}" is in both ${other} and ${source.path}`, source.path, {
          kind: 'repeated-across',
          otherPath: other,
        });
      from.set(item.id, source.path);
      all.push(item);
    }
  }
  return all;
}
