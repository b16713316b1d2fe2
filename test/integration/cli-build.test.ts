// The compiled `driftline` command (built by test/global-setup.ts as by `npm run setup`): it
// covers every source file under bin/, and its entry imports nothing but commander up front, so
// `driftline --help` does not load Temporal, the LLM client or the stores.
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = join(ROOT, 'dist');

/** Packages and files the entry loads before any command runs (static imports, transitively). */
function staticImports(file: string, seen = new Set<string>()): Set<string> {
  const packages = new Set<string>();
  const source = readFileSync(join(DIST, file), 'utf8');
  for (const match of source.matchAll(/^import\s+(?:[^'"]*?\s+from\s+)?["']([^"']+)["'];?$/gms)) {
    const target = match[1]!;
    if (target.startsWith('./')) {
      if (seen.has(target)) continue;
      seen.add(target);
      for (const p of staticImports(target.slice(2), seen)) packages.add(p);
    } else {
      packages.add(target);
    }
  }
  return packages;
}

describe('the compiled CLI', () => {
  it('is built from every source file under bin/', () => {
    const { inputs } = JSON.parse(readFileSync(join(DIST, 'build.json'), 'utf8')) as { inputs: string[] };
    const bin = readdirSync(join(ROOT, 'bin'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `bin/${f}`);
    for (const file of bin) expect(inputs, `${file} is not reached from bin/cli.ts`).toContain(file);
  });

  it('loads only commander and the run-configuration schema (typebox) before a command runs', () => {
    const packages = [...staticImports('cli.js')].filter((p) => !p.startsWith('node:')).sort();
    expect(packages).toEqual(['commander', 'typebox']);
  });

  it('answers --help from the compiled JavaScript, listing every command group', () => {
    const help = execFileSync(process.execPath, [join(ROOT, 'bin/driftline.js'), '--help'], { encoding: 'utf8' });
    for (const command of ['formalize', 'worker', 'start', 'keys', 'runs', 'index', 'eval', 'sweep'])
      expect(help).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    const runsHelp = execFileSync(process.execPath, [join(ROOT, 'bin/driftline.js'), 'runs', '--help'], { encoding: 'utf8' });
    for (const sub of ['list', 'show', 'cancel']) expect(runsHelp).toMatch(new RegExp(`^  ${sub}\\b`, 'm'));
  });
});
