// `driftline data pull [NAME…]`: the public data sets, from their sources at pinned commits (or
// DRIFTLINE_DATA_MIRROR), digest-checked, into the data directory (infra/public-data.ts).
import type { Command } from 'commander';
import { configOrExit } from './cli-support';
import { publicDataDir } from '../infra/config';
import { DATA_SETS, pullData } from '../infra/public-data';

/** Pulls and prints one line per data set; resolves to the exit status (1 when one failed). */
export async function dataPull(names: string[], opts: { quiet?: boolean } = {}): Promise<number> {
  const cfg = configOrExit({ skipFileChecks: true });
  const dir = publicDataDir(cfg);
  const mirror = process.env.DRIFTLINE_DATA_MIRROR || undefined;
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const results = await pullData({ dir, names, ...(mirror ? { mirror } : {}), ...(opts.quiet ? {} : { log: say }) });
  for (const r of results) {
    if (r.ok) {
      const fresh = r.files.filter((f) => f.status === 'downloaded').length;
      say(`data: ${r.name}: ${fresh ? `${fresh} file(s) written` : 'already present'}, checked (sha256) in ${dir}`);
    } else {
      say(`data: ${r.name} FAILED: ${r.error}`);
    }
  }
  return results.every((r) => r.ok) ? 0 : 1;
}

export function registerDataCommands(program: Command): void {
  const data = program.command('data').description('the public data sets (benchmarks and the default library)');
  data
    .command('pull')
    .description(
      `fetch data sets (default all: ${DATA_SETS.map((d) => d.name).join(', ')}) from their sources at pinned commits, or from DRIFTLINE_DATA_MIRROR (a directory or an HTTP(S) URL laid out like the data directory), checked against their SHA-256 digests, into the data directory (DRIFTLINE_SHARED_DATA, else <DRIFTLINE_DATA_DIR>/data)`,
    )
    .argument('[names...]', 'data sets to pull')
    .action(async (names: string[]) => {
      process.exitCode = await dataPull(names).catch((err: Error) => {
        process.stderr.write(`driftline: ${err.message}\n`);
        return 1;
      });
    });
}
