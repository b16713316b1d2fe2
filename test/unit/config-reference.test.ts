// The configuration reference is generated from the schema and checked in: this fails when the
// file differs from what the schema says (run `npm run docs:config`), when a variable is
// declared twice, and when the code reads a variable of ours that the reference does not list.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema, ENV_KEYS, OTHER_ENV_VARIABLES } from '../../infra/config';
import { envSettings } from '../../infra/config-env';
import { configurationReference, REFERENCE_PATH } from '../../infra/config-reference';
import { PROJECT_ROOT } from '../../infra/temporal-cli';

/** Product code: whatever reads the environment at run time. */
const PRODUCT_DIRS = ['activities', 'api', 'bin', 'client', 'common', 'engines', 'infra', 'workflows'];
/** Variables of other programs that the code passes on or reads (the shell's, Lean's, elan's, Go's). */
const NOT_OURS = new Set(['HOME', 'PATH', 'LEAN_PATH', 'LEAN_SYSROOT', 'ELAN_HOME', 'GOTOOLCHAIN']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs|js)$/.test(name) ? [path] : [];
  });
}

describe('the configuration reference (docs/configuration.md)', () => {
  it('is what the schema says now (else: npm run docs:config, and commit it)', () => {
    const checkedIn = readFileSync(REFERENCE_PATH, 'utf8');
    expect(checkedIn, `${relative(PROJECT_ROOT, REFERENCE_PATH)} is stale: run \`npm run docs:config\``).toBe(configurationReference());
  });

  it('lists each variable once, and every variable the schema declares is one ENV_KEYS reads', () => {
    const declared = envSettings(ConfigSchema).map((s) => s.env);
    const all = [...declared, ...OTHER_ENV_VARIABLES.map((v) => v.env)];
    expect(all.filter((name, i) => all.indexOf(name) !== i)).toEqual([]);
    expect(Object.keys(ENV_KEYS).sort()).toEqual([...declared].sort());
    const rows = readFileSync(REFERENCE_PATH, 'utf8').split('\n');
    for (const name of all)
      expect(
        rows.filter((row) => row.startsWith(`| \`${name}\` |`)),
        name,
      ).toHaveLength(1);
  });

  it('covers every variable of ours the code reads', () => {
    const known = new Set([...Object.keys(ENV_KEYS), ...OTHER_ENV_VARIABLES.map((v) => v.env)]);
    const unknown: string[] = [];
    for (const dir of PRODUCT_DIRS) {
      for (const file of sourceFiles(join(PROJECT_ROOT, dir))) {
        const text = readFileSync(file, 'utf8');
        for (const match of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g)) {
          const name = match[1] ?? match[2]!;
          if (!known.has(name) && !NOT_OURS.has(name)) unknown.push(`${relative(PROJECT_ROOT, file)}: ${name}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });
});
