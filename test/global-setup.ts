// Before any test: compile the `driftline` command (infra/build-cli.mjs), so tests that run it
// run the JavaScript a user runs, built from the sources as they are now; and pull the public
// data the way a user does (infra/public-data.ts, as `npm run setup` and `driftline data pull`),
// from DRIFTLINE_DATA_MIRROR, or where driftline is developed from ../shared/data beside the
// project (the product itself has no such default), else from the sources, which finds what
// `npm run setup` pulled already in place (helpers/public-data-setup.ts). Tests that need the data read it with
// publicData() (helpers/public-data.ts), which fails with this pull's error when it is absent.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { pullPublicData } from './helpers/public-data-setup';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The pulled public data directory, or why there is none. */
    publicData: { dir: string } | { error: string };
  }
}

const DEV_MIRROR = fileURLToPath(new URL('../../shared/data', import.meta.url));

export default async function setup(project: TestProject): Promise<void> {
  execFileSync(process.execPath, [fileURLToPath(new URL('../infra/build-cli.mjs', import.meta.url)), '--quiet'], { stdio: 'inherit' });
  project.provide('publicData', await pullPublicData({ devMirror: DEV_MIRROR }));
}
