// Wrapping the REPL command in the limits this platform offers: no network (a new, empty
// network namespace via `unshare -n`, or `unshare -rn` without root) and an address-space and
// CPU-time limit (`prlimit`). TMPDIR is not changed: the REPL inherits the worker's. Every
// wrapper `exec`s the next, so the REPL stays in the process group ReplProcess kills.
import { spawnSync } from 'node:child_process';

export interface SandboxSettings {
  /** Cut the process off from the network where `unshare` allows it. */
  noNetwork: boolean;
  /** Address-space limit (ulimit -v), MB. Mathlib maps its .olean files, so leave room
   * (tens of GB) or leave unset and rely on the RSS watch. */
  maxAddressSpaceMb?: number;
  /** CPU seconds per process (ulimit -t): a last resort behind the per-check timeout. */
  maxCpuSeconds?: number;
}

export interface SandboxPlan {
  command: string;
  /** What could not be applied on this platform, in words (logged once at start). */
  missing: string[];
  applied: string[];
}

const probes = new Map<string, boolean>();
function works(argv: string[]): boolean {
  const key = argv.join(' ');
  let ok = probes.get(key);
  if (ok === undefined) {
    const run = spawnSync(argv[0]!, [...argv.slice(1), 'true'], { stdio: 'ignore', timeout: 5000 });
    ok = run.status === 0;
    probes.set(key, ok);
  }
  return ok;
}

/** The `unshare` invocation that gives a network-less namespace here, if any. */
export function networkIsolation(): string[] | undefined {
  if (works(['unshare', '-n'])) return ['unshare', '-n'];
  if (works(['unshare', '-rn'])) return ['unshare', '-rn'];
  return undefined;
}

export function sandboxCommand(command: string, settings: SandboxSettings): SandboxPlan {
  const prefix: string[] = [];
  const missing: string[] = [];
  const applied: string[] = [];
  if (settings.noNetwork) {
    const unshare = networkIsolation();
    if (unshare) {
      prefix.push(...unshare, '--');
      applied.push('no network (own network namespace)');
    } else {
      missing.push('no network: `unshare -n` is not permitted here (run the image without network instead)');
    }
  }
  const limits: string[] = [];
  if (settings.maxAddressSpaceMb) limits.push(`--as=${settings.maxAddressSpaceMb * 1024 * 1024}`);
  if (settings.maxCpuSeconds) limits.push(`--cpu=${settings.maxCpuSeconds}`);
  if (limits.length > 0) {
    if (works(['prlimit', '--cpu=100000', '--'])) {
      prefix.push('prlimit', ...limits, '--');
      applied.push(`limits ${limits.join(' ')}`);
    } else {
      missing.push('resource limits: `prlimit` is not available');
    }
  }
  if (prefix.length === 0) return { command, missing, applied };
  return { command: `exec ${prefix.map(shellQuote).join(' ')} sh -c ${shellQuote(command)}`, missing, applied };
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
