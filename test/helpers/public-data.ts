// The public data directory test/global-setup.ts pulled, for the tests that read the real data
// sets. When it could not be pulled, this throws the reason: such a test fails, it never skips.
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { resolveNamedBenchmark } from '../../engines/benchmarks/named';

export function publicData(): string {
  const provided = inject('publicData');
  if ('error' in provided) throw new Error(`this test needs the public data, which test/global-setup.ts could not pull: ${provided.error}`);
  return provided.dir;
}

/** The raw records (one JSON object a line) of a named benchmark of the public data, and split,
 * by what the data directory has (engines/benchmarks/named.ts): the same records from the full
 * file of the source and from a mirror's split file. */
export function benchmarkRecords(name: string, split?: string): Record<string, unknown>[] {
  const resolved = resolveNamedBenchmark(name, split, publicData());
  const records = readFileSync(resolved.path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  if (!resolved.only) return records;
  const byName = new Map(records.map((r) => [String(r.full_name), r]));
  return resolved.only.ids.map((id) => {
    const record = byName.get(id);
    if (!record) throw new Error(`${resolved.path} lacks ${id} of the ${resolved.only!.split} split`);
    return record;
  });
}
