// The CLI's help words and its answer to an unknown option (bin/suggesting-command.ts,
// bin/run-config-options.ts), and the install scripts package.json allows (infra/setup.mjs).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addRunConfigOptions, offDescription } from '../../bin/run-config-options';
import { SuggestingCommand } from '../../bin/suggesting-command';

/** Parses `argv` with a formalize-like command; returns what commander wrote to stderr. */
function unknownOptionMessage(argv: string[]): string {
  const program = new SuggestingCommand().exitOverride();
  let said = '';
  program.configureOutput({ writeErr: (s) => (said += s), writeOut: () => undefined });
  const formalize = program.command('formalize').argument('<statement>').exitOverride();
  formalize.configureOutput({ writeErr: (s) => (said += s), writeOut: () => undefined });
  addRunConfigOptions(formalize)
    .option('--gold-premises <names>')
    .option('--gold-statement <lean>')
    .action(() => undefined);
  try {
    program.parse(['node', 'driftline', 'formalize', ...argv]);
  } catch {
    // exitOverride: commander throws instead of exiting.
  }
  return said;
}

describe('an unknown option', () => {
  it('is answered with the options it begins, where commander finds none within its edit distance', () => {
    expect(unknownOptionMessage(['--repair', '2', 'x'])).toBe("error: unknown option '--repair'\n(Did you mean --repair-rounds?)\n");
    expect(unknownOptionMessage(['--gold', 'x', 'y'])).toBe(
      "error: unknown option '--gold'\n(Did you mean --gold-premises or --gold-statement?)\n",
    );
    // Commander's own suggestion where it has one, and none where nothing is near.
    expect(unknownOptionMessage(['--retreival', 'none', 'x'])).toBe("error: unknown option '--retreival'\n(Did you mean --retrieval?)\n");
    expect(unknownOptionMessage(['--zzz', 'x'])).toBe("error: unknown option '--zzz'\n");
  });
});

describe('a --no- option', () => {
  it('says what turning it off does', () => {
    expect(offDescription('show the formalizer example theorems that use the premises')).toBe(
      'do not show the formalizer example theorems that use the premises',
    );
    expect(offDescription('read and write the LLM reply cache (off: every call goes to the provider)')).toBe(
      'do not read and write the LLM reply cache: every call goes to the provider',
    );
  });
});

describe("package.json's allowScripts", () => {
  it('decides on every package of the lock file that has an install script', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      allowScripts: Record<string, boolean>;
    };
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    for (const name of withScripts) expect(pkg.allowScripts, name).toHaveProperty([name]);
    expect(pkg.allowScripts['better-sqlite3']).toBe(true);
  });
});
