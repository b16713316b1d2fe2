// Before any test: compile the `driftline` command (infra/build-cli.mjs), so tests that run it
// run the JavaScript a user runs, built from the sources as they are now; and pull the public
// data the way a user does (infra/public-data.ts, as `npm run setup` and `driftline data pull`),
// from DRIFTLINE_DATA_MIRROR, or where driftline is developed from ../shared/data beside the
// project (the product itself has no such default). Tests that need the data read it with
// publicData() (helpers/public-data.ts), which fails with this pull's error when it is absent.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { loadConfig, publicDataDir } from '../infra/config';
import { pullData } from '../infra/public-data';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The pulled public data directory, or why there is none. */
    publicData: { dir: string } | { error: string };
  }
}

const DEV_MIRROR = fileURLToPath(new URL('../../shared/data', import.meta.url));

async function pullPublicData(): Promise<{ dir: string } | { error: string }> {
  const config = loadConfig({ skipFileChecks: true });
  const dir = publicDataDir(config);
  // DRIFTLINE_SHARED_DATA names a complete data directory: read as it is, nothing pulled.
  if (config.publicDataDir) return existsSync(dir) ? { dir } : { error: `DRIFTLINE_SHARED_DATA=${dir} does not exist` };
  const mirror = process.env.DRIFTLINE_DATA_MIRROR || (existsSync(DEV_MIRROR) ? DEV_MIRROR : undefined);
  if (!mirror) {
    return {
      error: `no public data: set DRIFTLINE_DATA_MIRROR to a directory or URL laid out like the data directory (or run \`npx driftline data pull\` where github.com can be reached)`,
    };
  }
  const results = await pullData({ dir, mirror });
  const failed = results.filter((r) => !r.ok);
  return failed.length ? { error: failed.map((r) => r.error).join('\n') } : { dir };
}

export default async function setup(project: TestProject): Promise<void> {
  execFileSync(process.execPath, [fileURLToPath(new URL('../infra/build-cli.mjs', import.meta.url)), '--quiet'], { stdio: 'inherit' });
  project.provide('publicData', await pullPublicData());
}
