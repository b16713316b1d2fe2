// `npm run bench`: runs every benchmark (bench/*.bench.ts) in turn, each in its own process.
// Each prints a readable table; with --json each prints one JSON object, and this prints one
// object holding them all by name, so runs can be compared.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const args = process.argv.slice(2);
const json = args.includes('--json');
const only = args.filter((a) => !a.startsWith('--'));
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

if (benches.length === 0) {
  process.stderr.write(`no benchmarks match ${only.join(', ')}\n`);
  process.exit(1);
}

const results: Record<string, unknown> = {};
let failed = false;
for (const file of benches) {
  const name = basename(file, '.bench.ts');
  if (!json) process.stdout.write(`\n## ${name}\n\n`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(dir, file), ...args], {
    stdio: json ? ['ignore', 'pipe', 'inherit'] : 'inherit',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) {
    failed = true;
    process.stderr.write(`benchmark ${name} failed (exit ${run.status})\n`);
    continue;
  }
  if (json) {
    try {
      results[name] = JSON.parse(run.stdout);
    } catch {
      failed = true;
      process.stderr.write(`benchmark ${name} did not print one JSON object with --json\n`);
    }
  }
}
if (json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
process.exit(failed ? 1 : 0);
