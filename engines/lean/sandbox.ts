// The sandbox around every REPL process: whatever text gets past the statement screen runs in
// a bubblewrap container with no network, a cleared environment, only the system, toolchain and
// library directories (read-only), a private tmpfs for /tmp and HOME, no capabilities, and
// kernel limits on address space and processes. When the worker runs as root the REPL runs as a
// dedicated uid, so the process limit (RLIMIT_NPROC counts per uid) means something.
// Under a root worker bwrap runs as root, so it resolves the bind paths with root's rights (a
// checkout or toolchain under a mode-700 folder such as /root can be bound), and the REPL drops
// to the dedicated uid inside the container, after the mounts (setpriv, keeping only the
// capabilities it needs for that). Bubblewrap's own `--unshare-user --uid` would leave the REPL
// root outside its namespace, which RLIMIT_NPROC never binds (docs/decisions/0020).
// Every wrapper `exec`s the next, so the outer process is the one ReplProcess spawned; bwrap's
// --die-with-parent and its pid namespace take everything inside along when it is killed.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

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

interface ProbeResult {
  /** null when the command exited 0, else why it failed (exit status and output, or the spawn error). */
  failure: string | null;
  stdout: string;
}
const probes = new Map<string, ProbeResult>();
/** Runs `argv` once per distinct command and remembers how it went. */
function probeRun(argv: string[]): ProbeResult {
  const key = argv.join('\0');
  let result = probes.get(key);
  if (result === undefined) {
    const run = spawnSync(argv[0]!, argv.slice(1), {
      encoding: 'utf8',
      timeout: 10_000,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    let failure: string | null = null;
    if (run.error) failure = run.error.message;
    else if (run.status !== 0) failure = `exit ${run.status ?? run.signal}: ${(run.stderr || run.stdout).trim().slice(0, 500)}`;
    result = { failure, stdout: run.stdout ?? '' };
    probes.set(key, result);
  }
  return result;
}
/** Runs `argv` (with `true` appended by the caller) once per distinct command: null, or why it failed. */
function probe(argv: string[]): string | null {
  return probeRun(argv).failure;
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

/** The uid:gid a root worker's REPL drops to inside the container, after bwrap's mounts. */
export interface DropTo {
  uid: number;
  gid: number;
}

/** The directories bwrap creates on the way to `binds` (not inside a bind or a system path):
 * it gives them the host's modes, so a mode-700 /root above /root/.elan would stop the REPL's uid. */
function createdParents(binds: string[]): string[] {
  const covered = [...binds, ...SYSTEM_PATHS, '/proc', '/dev'];
  const out = new Set<string>();
  for (const bind of binds) {
    for (let dir = dirname(bind); dir !== '/' && dir !== '/tmp'; dir = dirname(dir)) {
      if (covered.some((c) => inside(dir, c))) break;
      out.add(dir);
    }
  }
  return [...out].sort();
}

/** The paths bound into the container (read-only, then writable), as bwrapArgs binds them. */
function boundPaths(settings: SandboxSettings, env: Record<string, string>): { readOnly: string[]; writable: string[] } {
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
  return { readOnly: [...readOnly], writable: (settings.writable ?? []).map((p) => resolve(p)) };
}

/**
 * bwrap's arguments for these settings and this (already cleaned) environment. Without `dropTo`
 * bwrap runs unprivileged in its own user namespace as the worker's uid; with it (a root worker)
 * bwrap mounts with root's rights and keeps only CAP_SETUID, CAP_SETGID and CAP_SETPCAP for the
 * setpriv that drops to `dropTo` inside (replInContainer), which clears them all.
 */
export function bwrapArgs(settings: SandboxSettings, env: Record<string, string>, dropTo?: DropTo): string[] {
  const shareNet = settings.noNetwork === false;
  // No user namespace under a root worker: the REPL's uid must be a real one outside, for RLIMIT_NPROC.
  const args = dropTo
    ? ['--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try', ...(shareNet ? [] : ['--unshare-net'])]
    : ['--unshare-all', ...(shareNet ? ['--share-net'] : [])];
  // No --new-session: the REPL stays in the process group ReplProcess kills and the pool's
  // memory watch sums (the worker spawns it detached, and a container worker has no terminal).
  // The pid namespace and --die-with-parent also take everything inside along.
  args.push('--die-with-parent', '--cap-drop', 'ALL');
  if (dropTo) args.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP');
  for (const path of SYSTEM_PATHS) {
    if (!existsSync(path)) continue;
    if (lstatSync(path).isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else args.push('--ro-bind', path, path);
  }
  args.push('--proc', '/proc', '--dev', '/dev');
  // The scratch belongs to whichever uid the REPL runs as.
  if (dropTo) args.push('--perms', '1777');
  args.push('--tmpfs', '/tmp');
  const { readOnly, writable } = boundPaths(settings, env);
  for (const p of readOnly) args.push('--ro-bind', p, p);
  for (const p of writable) args.push('--bind', p, p);
  const bound = [...readOnly, ...writable];
  if (dropTo) for (const dir of createdParents(bound)) args.push('--chmod', '0755', dir);
  for (const p of settings.hidden ?? []) {
    const hidden = resolve(p);
    if (bound.some((b) => inside(hidden, b)) && existsSync(hidden)) args.push('--tmpfs', hidden);
  }
  args.push('--clearenv');
  for (const [name, value] of Object.entries({ ...env, HOME: '/tmp', TMPDIR: '/tmp' })) args.push('--setenv', name, value);
  args.push('--chdir', settings.cwd ? resolve(settings.cwd) : '/tmp');
  return args;
}

/** What runs inside the container: `argv`, as `dropTo` when given (every capability cleared). */
function replInContainer(argv: string[], dropTo?: DropTo): string[] {
  if (!dropTo) return argv;
  return [
    'setpriv',
    `--reuid=${dropTo.uid}`,
    `--regid=${dropTo.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    ...argv,
  ];
}

// Prints each argument the REPL's uid cannot read (or, for a directory, enter).
const REACH_PROBE = 'for p do if [ -d "$p" ]; then [ -r "$p" ] && [ -x "$p" ]; else [ -r "$p" ]; fi || echo "$p"; done';

/** The first folder on the way to `path` that `uid` may not enter, from the host's modes. */
function closedFolder(path: string, uid: number): string | undefined {
  const parts: string[] = [];
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    parts.unshift(dir);
    if (dir === '/') break;
  }
  for (const dir of parts) {
    try {
      const st = statSync(dir);
      const open = st.uid === uid ? st.mode & 0o100 : st.mode & 0o001;
      if (!open) return `${dir} (mode ${(st.mode & 0o777).toString(8)}, owner uid ${st.uid})`;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The probe's failure as its cause and what to do, in words; the raw text stays at the end. */
export function explainSandboxFailure(failure: string, ctx: { bwrap: string; runsAs: number }): string {
  const missing =
    /spawnSync (\S+) ENOENT/.exec(failure)?.[1] ??
    /failed to execute (\S+): No such file/.exec(failure)?.[1] ??
    /execvp (\S+): No such file/.exec(failure)?.[1];
  if (missing)
    return `\`${missing}\` is not installed or not on PATH (${missing === ctx.bwrap || missing.endsWith('bwrap') ? 'Debian: apt-get install bubblewrap' : 'Debian: apt-get install util-linux'})`;
  const source = /Can't find source path (.+?): (Permission denied|No such file or directory)/.exec(failure);
  if (source) {
    const [, path, why] = source;
    if (why!.startsWith('No such'))
      return `${path} does not exist (a directory the REPL is given: its working directory, toolchain, or LEAN_SANDBOX_READ / LEAN_SANDBOX_WRITE)`;
    const closed = closedFolder(path!, ctx.runsAs);
    return `uid ${ctx.runsAs}, as which bubblewrap runs, cannot reach ${path}${closed ? `: ${closed} is closed to it` : ''}; open the folder (chmod o+x) or move the checkout or toolchain`;
  }
  if (
    /setting up uid map|No permissions to creat\w* new namespace|Creating new namespace failed|unshare.*(not permitted|denied)|user namespace/i.test(
      failure,
    )
  )
    return (
      `this machine refuses bubblewrap a new namespace for uid ${ctx.runsAs} (unprivileged user namespaces are off: ` +
      'sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, or an AppArmor profile for bwrap; in a container, run it with user namespaces allowed; infra/DEPLOY.md)'
    );
  if (/Resource temporarily unavailable/i.test(failure))
    return `the process limit (LEAN_SANDBOX_MAX_PROCS) is already reached: RLIMIT_NPROC counts every process and thread of the REPL's uid on the machine`;
  if (/Operation not permitted/i.test(failure))
    return `bubblewrap may not mount or create namespaces here as uid ${ctx.runsAs} (a container without CAP_SYS_ADMIN and without user namespaces; infra/DEPLOY.md)`;
  return `\`${ctx.bwrap}\` failed`;
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

  // Limits first (prlimit), then bwrap; a root worker's REPL drops to its uid inside (setpriv).
  if (settings.maxProcesses) limits.push(`--nproc=${settings.maxProcesses}`);
  const prefix: string[] = [];
  if (limits.length > 0) prefix.push('prlimit', ...limits, '--');
  const root = isRoot();
  const uid = settings.uid ?? DEFAULT_SANDBOX_UID;
  const gid = settings.gid ?? uid;
  const bin = settings.bwrap ?? 'bwrap';
  const { readOnly, writable } = boundPaths(settings, env);
  // A root worker first mounts as root and drops inside; where root may not mount (a container
  // without CAP_SYS_ADMIN) it drops first and lets bwrap use a user namespace, as an unprivileged
  // user would, which needs every bound path reachable by that uid.
  const ways: { outer: string[]; dropTo?: DropTo; runsAs: number }[] = root
    ? [
        { outer: prefix, dropTo: { uid, gid }, runsAs: 0 },
        { outer: [...prefix, 'setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'], runsAs: uid },
      ]
    : [{ outer: prefix, runsAs: process.getuid?.() ?? uid }];
  const causes: string[] = [];
  for (const way of ways) {
    const bwrap = [bin, ...bwrapArgs(settings, env, way.dropTo)];
    const run = probeRun([
      ...way.outer,
      ...bwrap,
      '--',
      ...replInContainer(['sh', '-c', REACH_PROBE, 'sh', ...readOnly, ...writable], way.dropTo),
    ]);
    if (run.failure !== null) {
      // Both ways of a root worker may fail for the same cause: it is said once.
      const why = explainSandboxFailure(run.failure, { bwrap: bin, runsAs: way.runsAs });
      if (!causes.some((c) => c.startsWith(`${why} [`))) causes.push(`${why} [${run.failure.replace(/\s+/g, ' ').slice(0, 300)}]`);
      continue;
    }
    const unreachable = run.stdout.split('\n').filter(Boolean);
    if (unreachable.length > 0) {
      const who = root ? uid : (process.getuid?.() ?? uid);
      const described = unreachable.map((p) => {
        try {
          const st = statSync(p);
          return `${p} (mode ${(st.mode & 0o777).toString(8)}, owner uid ${st.uid})`;
        } catch {
          return p;
        }
      });
      throw new SandboxUnavailableError(
        `The Lean REPL sandbox cannot be set up: the REPL's user (uid ${who}) cannot read ${described.join(', ')}. ` +
          'Make it readable by others (chmod o+rX), bind a folder inside it instead, or choose the uid the REPL runs as (LEAN_SANDBOX_USER).',
      );
    }
    applied.push(
      `bubblewrap: ${settings.noNetwork === false ? 'network shared (LEAN_NO_NETWORK=false)' : 'no network'}, read-only system and toolchain, private /tmp as HOME, no capabilities`,
    );
    if (root) applied.push(`runs as uid ${uid}:${gid}${way.dropTo ? ' (dropped inside the container, after its mounts)' : ''}`);
    if (limits.length > 0) applied.push(`limits ${limits.join(' ')}`);
    if (settings.noNetwork === false) missing.push('LEAN_NO_NETWORK=false: the REPL shares the network');
    if (!settings.maxAddressSpaceMb) missing.push('LEAN_MAX_AS_MB=0: no address-space limit');
    if (!settings.maxProcesses) missing.push('LEAN_SANDBOX_MAX_PROCS=0: no process limit');
    const argv = [...way.outer, ...bwrap, '--', ...replInContainer(['sh', '-c', command], way.dropTo)];
    return { command: `exec ${argv.map(shellQuote).join(' ')}`, env, applied, missing };
  }
  throw new SandboxUnavailableError(
    `The Lean REPL sandbox cannot be set up: ${causes.join('; and then, ')}. ` +
      'Mend that (infra/DEPLOY.md), or set LEAN_SANDBOX=off to run the REPL without it (/readyz then warns).',
  );
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
