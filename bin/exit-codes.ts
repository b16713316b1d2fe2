// The exit statuses of `formalize`, `check` and `sweep`, the one home of them: the commands
// compute their status here, and `--help` and docs/cli.md list the same words. A status a script
// reads must not change meaning: 0 is success only, 1 is always "the command itself failed"
// (bad input, a service down, a failed run or batch), and the others say what was decided.
// Imported by bin/cli.ts before any command runs: no package imports here.

export const EXIT = {
  ok: 0,
  failed: 1,
  /** Lean rejected a statement (a run's last attempt; in a batch, at least one). */
  rejected: 2,
  /** The statement screen refused a statement before Lean (a run's last attempt; in a batch, at least one). */
  refused: 3,
  /** `sweep status`: the sweep completed, but some runs failed (`sweep retry` starts them again). */
  runsFailed: 2,
  /** `sweep status`: the sweep ended without completing (cancelled, failed, budget exhausted). */
  notCompleted: 3,
  /** Interrupted by Ctrl-C (128 + SIGINT), as a shell reports it. */
  interrupted: 130,
} as const;

/** `driftline formalize`: from the run's result (its outcome, whether Lean checked and compiled it). */
export function formalizeExitCode(result: { outcome: string; checked: boolean; compiled: boolean }): number {
  if (result.outcome === 'refused') return EXIT.refused;
  if (result.checked && !result.compiled) return EXIT.rejected;
  return EXIT.ok;
}

/** `driftline check`: the worst of the batch, a failed check first (nothing is known of it). */
export function checksExitCode(summary: { failed: number; rejected: number; refused: number }): number {
  if (summary.failed > 0) return EXIT.failed;
  if (summary.rejected > 0) return EXIT.rejected;
  if (summary.refused > 0) return EXIT.refused;
  return EXIT.ok;
}

/** `driftline sweep status` (once, `--json` or `--watch`): the sweep's state when the command ends. */
export function sweepStatusExitCode(progress: { status: string; failed: number }): number {
  if (progress.status === 'completed') return progress.failed > 0 ? EXIT.runsFailed : EXIT.ok;
  if (['cancelled', 'failed', 'budget-exhausted'].includes(progress.status)) return EXIT.notCompleted;
  return EXIT.ok; // running or paused: the progress was printed
}

/** The `--help` epilogues, in the words of docs/cli.md. */
export const EXIT_HELP = {
  formalize:
    '\nExit status: 0 compiled (or no Lean configured to check it), 1 the run failed, 2 Lean rejected the last attempt, ' +
    '3 the statement screen refused the last attempt before Lean.',
  check:
    '\nExit status: 0 every statement compiled (or no Lean is configured), 1 the file is malformed, the batch failed or a ' +
    "statement's check failed, 2 Lean rejected at least one statement, 3 the screen refused at least one (and Lean rejected none); " +
    'the first that applies.',
  sweepStatus:
    '\nExit status: 0 running, paused, or completed with every run done; 1 no such sweep or a service is down; 2 completed, ' +
    'some runs failed (sweep retry starts them again); 3 ended without completing (cancelled, failed, budget exhausted); ' +
    '130 --watch interrupted.',
  sweep: '\nExit status: 0 done (started, sent, written), 1 it could not be done (the message says why).',
} as const;
