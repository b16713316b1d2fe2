// The Lean worker's count of integrity events (decision 0017): each REPL tampering and each
// parse error Lean reports on a text the screen accepted is a hole found. The pool logs each one
// as a pino warning with its trust domain; this counts it on the worker's Prometheus endpoint
// (DRIFTLINE_METRICS_ADDRESS), labelled by kind and by when it happened.
import type { MetricMeter } from '@temporalio/common';
import type { IntegrityEvent } from '../engines/lean/repl-pool';

export const LEAN_INTEGRITY_METRIC = 'driftline_lean_integrity_events';

/** The pool's `onIntegrity`: one count per event. The domain is not a label (one per API key
 * and predictions file would grow without bound); it is in the warning. */
export function leanIntegrityCounter(meter: MetricMeter): (event: IntegrityEvent) => void {
  const counter = meter.createCounter(
    LEAN_INTEGRITY_METRIC,
    'events',
    'Lean REPL tamperings and screen/Lean parse disagreements (decision 0017)',
  );
  return (event) => counter.add(1, { kind: event.kind, during: event.during });
}
