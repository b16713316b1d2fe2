// A sweep's rates, defined once: finished runs (failed ones included) per second of the sweep's
// active time, the unpaused time since it started on the workflow's clock. A configuration's
// rate is its own finished runs over the same time, so the configurations' rates add up to the
// sweep's; an ETA is what is left at that rate. The sweep workflow computes its progress with
// these, and the CLI shows them through formatRate.

/** Finished runs per second of `activeMs` (0 before any time has passed). */
export function runsPerSecond(done: number, activeMs: number): number {
  return activeMs > 0 ? done / (activeMs / 1000) : 0;
}

/** Seconds to finish `left` runs at `rate`: 0 when none are left, null while the rate is unknown. */
export function etaSeconds(left: number, rate: number): number | null {
  return left <= 0 ? 0 : rate > 0 ? left / rate : null;
}

/** A rate in words a person reads at a glance: runs/s from one a second up, runs/min below, so
 * a slow sweep's configurations do not all round to the same `0.02 runs/s`. */
export function formatRate(rate: number): string {
  if (!Number.isFinite(rate) || rate <= 0) return '0 runs/min';
  if (rate >= 1) return `${rate.toFixed(2)} runs/s`;
  const perMinute = rate * 60;
  return `${perMinute >= 10 ? perMinute.toFixed(1) : perMinute.toFixed(2)} runs/min`;
}
