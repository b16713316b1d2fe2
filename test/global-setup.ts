// Before any test: compile the `driftline` command (infra/build-cli.mjs), so tests that run it
// run the JavaScript a user runs, built from the sources as they are now.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../infra/build-cli.mjs', import.meta.url)), '--quiet'], { stdio: 'inherit' });
}
