// How the tests get the public data, as a user's machine has it (test/global-setup.ts): what
// `npm run setup` pulled into the data directory, or a pull now, from DRIFTLINE_DATA_MIRROR or,
// where driftline is developed, ../shared/data beside the project; else what setup left in the
// data directory (from the source or a mirror), and only what is missing from the sources.
import { existsSync } from 'node:fs';
import { loadConfig, publicDataDir } from '../../infra/config';
import { dataDirComplete, pullData, type DataSet } from '../../infra/public-data';

export interface PublicDataOptions {
  env?: NodeJS.ProcessEnv;
  /** The development mirror beside the project, used when it exists and no mirror is set. */
  devMirror?: string;
  /** Tests of this helper: the raw-file host and the data sets. */
  rawBase?: string;
  sets?: readonly DataSet[];
}

export async function pullPublicData(opts: PublicDataOptions = {}): Promise<{ dir: string } | { error: string }> {
  const env = opts.env ?? process.env;
  const config = loadConfig({ skipFileChecks: true, env });
  const dir = publicDataDir(config);
  // DRIFTLINE_SHARED_DATA names a complete data directory: read as it is, nothing pulled.
  if (config.publicDataDir) return existsSync(dir) ? { dir } : { error: `DRIFTLINE_SHARED_DATA=${dir} does not exist` };
  const mirror = env.DRIFTLINE_DATA_MIRROR || (opts.devMirror && existsSync(opts.devMirror) ? opts.devMirror : undefined);
  // What `npm run setup` left, from the source or a mirror, is read as it is, with no network.
  if (!mirror && (await dataDirComplete(dir, opts.sets))) return { dir };
  const results = await pullData({
    dir,
    ...(mirror ? { mirror } : {}),
    ...(opts.rawBase ? { rawBase: opts.rawBase } : {}),
    ...(opts.sets ? { sets: opts.sets } : {}),
  });
  const failed = results.filter((r) => !r.ok);
  return failed.length ? { error: failed.map((r) => r.error).join('\n') } : { dir };
}
