// The sandbox around every REPL process: whatever text gets past the statement screen runs in
// a bubblewrap container with no network, a cleared environment, only the system, toolchain and
// library directories (read-only), a private tmpfs for /tmp and HOME, no capabilities, and
// kernel limits on address space and processes. When the worker runs as root the REPL runs as a
// dedicated uid, so the process limit (RLIMIT_NPROC counts per uid) means something.
// Every wrapper `exec`s the next, so the outer process is the one ReplProcess spawned; bwrap's
// --die-with-parent and its pid namespace take everything inside along when it is killed.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';

export type SandboxMode = 'bwrap' | 'off';

export interface SandboxSettings {
  /** `bwrap` (default): bubblewrap, or refuse to start; `off`: no container (limits still applied where `prlimit` exists). */
  mode?: SandboxMode;
  /** The bubblewrap binary (default `bwrap` on PATH). */
  bwrap?: string;
  /** Cut the process off from the network (default true). */
  noNetwork?: boolean;
  /** RLIMIT_AS per process, MB; 0 or unset: none. Mathlib maps its .olean files: leave tens of GB. */
  maxAddressSpaceMb?: number;
  /** RLIMIT_NPROC: processes and threads of the sandbox uid, machine-wide; 0 or unset: none. */
  maxProcesses?: number;
  /** CPU seconds per process: a last resort behind the per-check timeout. */
  maxCpuSeconds?: number;
  /** The uid:gid the REPL runs as when the worker is root (default 65534, nobody). */
  uid?: number;
  gid?: number;
  /** The REPL's working directory: bound read-only, and where the REPL starts. */
  cwd?: string;
  /** More directories or files bound read-only (the REPL binary's project, for instance). */
  readOnly?: string[];
  /** Paths bound writable (tests use it for the fake REPL's log; Lean needs none). */
  writable?: string[];
  /** Paths hidden behind an empty tmpfs even when inside a bound directory (the data directory). */
  hidden?: string[];
  /** Names of extra environment variables to pass (secret-looking names are refused). */
  passEnv?: string[];
}

export interface SandboxPlan {
  command: string;
  /** The environment of the outer spawn (inside the container it is set again by bwrap). */
  env: Record<string, string>;
  applied: string[];
  /** What is not applied, in words (logged at start, and /readyz warns for `off`). */
  missing: string[];
}

/** The sandbox cannot be set up: the Lean worker must not start. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

export const DEFAULT_SANDBOX_UID = 65534;
export const DEFAULT_MAX_ADDRESS_SPACE_MB = 32_768;
export const DEFAULT_MAX_PROCESSES = 2048;

// What Lean, Lake and elan read from the environment; nothing else crosses into the REPL.
const PASSED =
  /^(PATH|LANG|LANGUAGE|TZ|LC_[A-Z]+|LEAN_PATH|LEAN_SYSROOT|LEAN_SRC_PATH|LEAN_NUM_THREADS|LEAN_CC|ELAN_HOME|ELAN_TOOLCHAIN|LAKE|LAKE_[A-Z0-9_]+)$/;
// Never passed, even when listed or named by the operator: anything that looks like a
// credential, and the worker's own settings (which carry API keys and database URLs).
const SECRET_LOOKING = /KEY|TOKEN|SECRET|PASS|PWD|CRED|AUTH|COOKIE|SESSION|PRIVATE|CERT|SIGN/i;
const WORKER_PREFIXES = /^(DRIFTLINE_|OPENAI_|QDRANT_|TEMPORAL_|AWS_|GOOGLE_|AZURE_|PG|DATABASE|NPM_|GITHUB_|GH_|HF_)/i;

/** Why a variable may not be passed to the REPL, or undefined when it may. */
export function refusedEnvName(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return 'not a variable name';
  if (SECRET_LOOKING.test(name)) return 'looks like a credential';
  if (WORKER_PREFIXES.test(name)) return "is one of the worker's own settings";
  return undefined;
}

/** The environment a REPL gets: the allowlist above, plus the named extras, never a secret. */
export function replEnvironment(env: NodeJS.ProcessEnv = process.env, extra: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if ((PASSED.test(name) || extra.includes(name)) && !refusedEnvName(name)) out[name] = value;
  }
  // elan finds its toolchains under $HOME/.elan; inside the sandbox HOME is the scratch dir.
  if (!out.ELAN_HOME && env.HOME && existsSync(join(env.HOME, '.elan'))) out.ELAN_HOME = join(env.HOME, '.elan');
  return out;
}

const probes = new Map<string, string | null>();
/** Runs `argv` (with `true` appended by the caller) once per distinct command: null, or why it failed. */
function probe(argv: string[]): string | null {
  const key = argv.join('\0');
  let result = probes.get(key);
  if (result === undefined) {
    const run = spawnSync(argv[0]!, argv.slice(1), {
      encoding: 'utf8',
      timeout: 10_000,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    if (run.error) result = run.error.message;
    else if (run.status !== 0) result = `exit ${run.status ?? run.signal}: ${(run.stderr || run.stdout).trim().slice(0, 500)}`;
    else result = null;
    probes.set(key, result);
  }
  return result;
}

/** The `unshare` invocation giving a network-less namespace here, if any (for `off`). */
export function networkIsolation(): string[] | undefined {
  if (probe(['unshare', '-n', 'true']) === null) return ['unshare', '-n'];
  if (probe(['unshare', '-rn', 'true']) === null) return ['unshare', '-rn'];
  return undefined;
}

// System directories the REPL (and a shell) need, read-only; symlinks (merged /usr) stay symlinks.
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

function inside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** bwrap's arguments for these settings and this (already cleaned) environment. */
export function bwrapArgs(settings: SandboxSettings, env: Record<string, string>): string[] {
  const args = ['--unshare-all'];
  if (settings.noNetwork === false) args.push('--share-net');
  // No --new-session: the REPL stays in the process group ReplProcess kills and the pool's
  // memory watch sums (the worker spawns it detached, and a container worker has no terminal).
  // The pid namespace and --die-with-parent also take everything inside along.
  args.push('--die-with-parent', '--cap-drop', 'ALL');
  for (const path of SYSTEM_PATHS) {
    if (!existsSync(path)) continue;
    if (lstatSync(path).isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else args.push('--ro-bind', path, path);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  const readOnly = new Set<string>();
  const add = (p: string | undefined) => {
    if (p && isAbsolute(p) && existsSync(p)) readOnly.add(resolve(p));
  };
  // The toolchain and library the environment points at.
  add(env.ELAN_HOME);
  add(env.LEAN_SYSROOT);
  for (const p of (env.LEAN_PATH ?? '').split(':')) add(p);
  if (settings.cwd) readOnly.add(resolve(settings.cwd)); // missing: bwrap fails, the probe says so
  for (const p of settings.readOnly ?? []) readOnly.add(resolve(p));
  for (const p of readOnly) args.push('--ro-bind', p, p);
  const bound = [...readOnly];
  for (const p of settings.writable ?? []) {
    args.push('--bind', resolve(p), resolve(p));
    bound.push(resolve(p));
  }
  for (const p of settings.hidden ?? []) {
    const hidden = resolve(p);
    if (bound.some((b) => inside(hidden, b)) && existsSync(hidden)) args.push('--tmpfs', hidden);
  }
  args.push('--clearenv');
  for (const [name, value] of Object.entries({ ...env, HOME: '/tmp', TMPDIR: '/tmp' })) args.push('--setenv', name, value);
  args.push('--chdir', settings.cwd ? resolve(settings.cwd) : '/tmp');
  return args;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * The command that runs `command` in the sandbox, probed here (so a missing or refused bwrap
 * stops the worker now, not at the first check). Throws SandboxUnavailableError when
 * `mode` is `bwrap` and bubblewrap cannot be set up.
 */
export function sandboxCommand(command: string, settings: SandboxSettings, parentEnv: NodeJS.ProcessEnv = process.env): SandboxPlan {
  const env = replEnvironment(parentEnv, settings.passEnv ?? []);
  const applied: string[] = ['environment cleared (only Lean, Lake and elan settings pass)'];
  const missing: string[] = [];
  const limits: string[] = [];
  if (settings.maxAddressSpaceMb) limits.push(`--as=${settings.maxAddressSpaceMb * 1024 * 1024}`);
  if (settings.maxCpuSeconds) limits.push(`--cpu=${settings.maxCpuSeconds}`);
  const mode = settings.mode ?? 'bwrap';
  if (mode === 'off') {
    // No private scratch without the sandbox: HOME is the worker's temporary directory.
    const scratch = parentEnv.TMPDIR || tmpdir();
    Object.assign(env, { HOME: scratch, TMPDIR: scratch });
    missing.push(
      'LEAN_SANDBOX=off: the REPL runs without bubblewrap (it sees the file system and, where `unshare -n` is not permitted, the network)',
    );
    const prefix: string[] = [];
    if (settings.noNetwork !== false) {
      const unshare = networkIsolation();
      if (unshare) {
        prefix.push(...unshare, '--');
        applied.push('no network (own network namespace)');
      } else missing.push('no network: `unshare -n` is not permitted here');
    }
    if (limits.length > 0) {
      if (probe(['prlimit', '--cpu=100000', '--', 'true']) === null) {
        prefix.push('prlimit', ...limits, '--');
        applied.push(`limits ${limits.join(' ')}`);
      } else missing.push('resource limits: `prlimit` is not available');
    }
    const wrapped = prefix.length === 0 ? command : `exec ${prefix.map(shellQuote).join(' ')} sh -c ${shellQuote(command)}`;
    return { command: wrapped, env, applied, missing };
  }

  // Limits first (prlimit), then the uid switch (setpriv, as root only), then bwrap: each execs the next.
  if (settings.maxProcesses) limits.push(`--nproc=${settings.maxProcesses}`);
  const prefix: string[] = [];
  if (limits.length > 0) prefix.push('prlimit', ...limits, '--');
  const root = isRoot();
  const uid = settings.uid ?? DEFAULT_SANDBOX_UID;
  const gid = settings.gid ?? uid;
  if (root) prefix.push('setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--');
  const bwrap = [settings.bwrap ?? 'bwrap', ...bwrapArgs(settings, env)];
  const failure = probe([...prefix, ...bwrap, '--', 'sh', '-c', 'exit 0']);
  if (failure !== null) {
    throw new SandboxUnavailableError(
      `The Lean REPL sandbox cannot be set up: \`${bwrap[0]}\` failed (${failure}). ` +
        'Install bubblewrap (Debian: apt-get install bubblewrap) and allow it user namespaces (infra/DEPLOY.md), ' +
        'or set LEAN_SANDBOX=off to run the REPL without it (/readyz then warns).',
    );
  }
  applied.push(
    `bubblewrap: ${settings.noNetwork === false ? 'network shared (LEAN_NO_NETWORK=false)' : 'no network'}, read-only system and toolchain, private /tmp as HOME, no capabilities`,
  );
  if (root) applied.push(`runs as uid ${uid}:${gid}`);
  if (limits.length > 0) applied.push(`limits ${limits.join(' ')}`);
  if (settings.noNetwork === false) missing.push('LEAN_NO_NETWORK=false: the REPL shares the network');
  if (!settings.maxAddressSpaceMb) missing.push('LEAN_MAX_AS_MB=0: no address-space limit');
  if (!settings.maxProcesses) missing.push('LEAN_SANDBOX_MAX_PROCS=0: no process limit');
  const argv = [...prefix, ...bwrap, '--', 'sh', '-c', command];
  return { command: `exec ${argv.map(shellQuote).join(' ')}`, env, applied, missing };
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
