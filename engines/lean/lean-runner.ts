// Building the Lean runner: the REPL pool (repl-pool.ts) behind the sandbox, or, when no REPL
// is configured, the runner that checks nothing and says so.
import { ReplPool, type ReplPoolSettings } from './repl-pool';
import { SkippedLeanRunner, type LeanRunner } from './runner';
import { sandboxCommand, type SandboxSettings } from './sandbox';

export interface LeanRunnerSettings extends Omit<ReplPoolSettings, 'replCmd'> {
  /** Shell command starting the REPL (`LEAN_REPL_CMD`); absent means Lean is not available. */
  replCmd?: string;
  /** Limits to wrap the command in; none by default. */
  sandbox?: SandboxSettings;
}

export function createLeanRunner(settings: LeanRunnerSettings): LeanRunner {
  const replCmd = settings.replCmd?.trim();
  if (!replCmd) return new SkippedLeanRunner();
  const { sandbox, ...pool } = settings;
  if (!sandbox) return new ReplPool({ ...pool, replCmd });
  const plan = sandboxCommand(replCmd, sandbox);
  if (plan.applied.length) settings.log?.info({ applied: plan.applied }, 'Lean REPL sandbox');
  if (plan.missing.length) settings.log?.warn({ missing: plan.missing }, 'Lean REPL sandbox: not available on this platform');
  return new ReplPool({ ...pool, replCmd: plan.command });
}
