// The status files workers leave in the data directory for clients and the API to read
// (providers, libraries, Lean integrity events): written whole, by rename, so a reader never
// sees half a file.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Writes `value` as JSON to `file` through a temporary file and a rename. */
export function writeJsonAtomic(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, file);
}
