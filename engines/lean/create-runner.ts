// Building the Lean runner: the REPL pool (repl-pool.ts) inside the sandbox (sandbox.ts), or,
// when no REPL is configured, the runner that checks nothing and says so.
import { ReplPool, type ReplPoolSettings } from './repl-pool';
import { SkippedLeanRunner, type LeanRunner } from './runner-contract';
import { DEFAULT_MAX_ADDRESS_SPACE_MB, DEFAULT_MAX_PROCESSES, sandboxCommand, type SandboxSettings } from './sandbox';

export interface LeanRunnerSettings extends Omit<ReplPoolSettings, 'replCmd'> {
  /** Shell command starting the REPL (`LEAN_REPL_CMD`); absent means Lean is not available. */
  replCmd?: string;
  /** The sandbox; unset: bubblewrap with the default limits. `{ mode: 'off' }` opts out. */
  sandbox?: SandboxSettings;
}

/** The sandbox a REPL gets when nobody says otherwise: bubblewrap, no network, default limits. */
export const DEFAULT_SANDBOX: SandboxSettings = {
  mode: 'bwrap',
  noNetwork: true,
  maxAddressSpaceMb: DEFAULT_MAX_ADDRESS_SPACE_MB,
  maxProcesses: DEFAULT_MAX_PROCESSES,
};

/** Throws SandboxUnavailableError when the sandbox is asked for and cannot be set up. */
export function createLeanRunner(settings: LeanRunnerSettings): LeanRunner {
  const replCmd = settings.replCmd?.trim();
  if (!replCmd) return new SkippedLeanRunner();
  const { sandbox, ...pool } = settings;
  const plan = sandboxCommand(replCmd, { ...DEFAULT_SANDBOX, cwd: settings.cwd, ...sandbox });
  settings.log?.info({ applied: plan.applied }, 'Lean REPL sandbox');
  if (plan.missing.length) settings.log?.warn({ missing: plan.missing }, 'Lean REPL sandbox: not everything is applied');
  return new ReplPool({ ...pool, replCmd: plan.command, env: { ...plan.env, ...pool.env } });
}
