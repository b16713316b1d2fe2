// Where the Lean worker reports integrity events (decision 0017): each REPL tampering and each
// parse error Lean reports on a text the screen accepted is a hole found. The pool logs each one
// as a pino warning with its trust domain; this counts it on the worker's Prometheus endpoint
// (DRIFTLINE_METRICS_ADDRESS), labelled by kind and by when it happened, and in the data
// directory's status file, which the API sums for /readyz.
import type { MetricMeter } from '@temporalio/common';
import type { IntegrityEvent } from '../engines/lean/repl-pool';
import type { RunnerLog } from '../engines/lean/runner-contract';
import { recordLeanIntegrity } from '../engines/lean/integrity-status-file';

export const LEAN_INTEGRITY_METRIC = 'driftline_lean_integrity_events';

/** The pool's `onIntegrity`. The domain is not a metric label (one per API key and predictions
 * file would grow without bound) nor in the file (the API shows it to anyone): it is in the log. */
export function leanIntegrityRecorder(opts: { meter: MetricMeter; statusFile: string; log?: RunnerLog }): (event: IntegrityEvent) => void {
  const counter = opts.meter.createCounter(
    LEAN_INTEGRITY_METRIC,
    'events',
    'Lean REPL tamperings and screen/Lean parse disagreements (decision 0017)',
  );
  return (event) => {
    counter.add(1, { kind: event.kind, during: event.during });
    try {
      recordLeanIntegrity(opts.statusFile, event.kind);
    } catch (err) {
      opts.log?.warn({ err, leanIntegrity: event.kind }, 'could not record the Lean integrity event for /readyz');
    }
  };
}
