// Compiles the `driftline` command to JavaScript once (at `npm run setup`, and before the tests)
// so it starts without compiling TypeScript each time. One bundle of our own code from
// bin/cli.ts (every command under bin/ it reaches, dynamic imports as separate chunks loaded
// only when used); packages stay in node_modules. dist/build.json lists the source files that
// went in: bin/driftline.js runs the bundle only while none of them is newer, else the sources.
import { build } from 'esbuild';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Built beside dist/ and swapped in by rename, so a CLI starting meanwhile never sees half a build.
const out = join(root, `dist.tmp-${process.pid}`);
const builtAtMs = Date.now();
const started = performance.now();
const result = await build({
  absWorkingDir: root,
  entryPoints: { cli: 'bin/cli.ts' },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/'));
writeFileSync(join(out, 'build.json'), JSON.stringify({ builtAtMs, inputs: inputs.map((f) => relative(root, join(root, f))) }, null, 1));
const dist = join(root, 'dist');
const old = join(root, `dist.old-${process.pid}`);
mkdirSync(dist, { recursive: true });
renameSync(dist, old);
renameSync(out, dist);
rmSync(old, { recursive: true, force: true });
if (!process.argv.includes('--quiet')) {
  console.log(
    `build: the driftline command compiled to dist/ (${inputs.length} source files, ${Math.round(performance.now() - started)} ms)`,
  );
}
