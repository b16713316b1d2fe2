// A sweep's provider batches in words, the same on every door that shows them as text: the
// counts, and each batch in flight (how many requests, since when, its status at the provider).
// `driftline sweep status` prints the lines; the web page's sweep card shows the same phrases.
import type { BatchInFlight, SweepBatchCounts } from './llm-batch';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** How long since an ISO time, in words: "45 s", "12 min", "3 h 5 min"; undefined when the time
 * does not read as one. */
export function elapsedWords(sinceIso: string, now: number): string | undefined {
  const since = Date.parse(sinceIso);
  if (!Number.isFinite(since)) return undefined;
  const s = Math.max(0, Math.round((now - since) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  const h = Math.floor(s / 3600);
  return `${h} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The counts, e.g. "2 in flight; 5 submitted, 3 completed, 0 failed; 410 requests, 4 resubmitted,
 * 1 sent one at a time". */
export function batchCountsText(v: SweepBatchCounts): string {
  if (v.submitted === 0 && v.synchronous === 0) return 'none submitted yet';
  return (
    `${v.inFlight} in flight; ${v.submitted} submitted, ${v.completed} completed, ${v.failed} failed; ` +
    `${plural(v.requests, 'request')}, ${v.resubmitted} resubmitted, ${v.synchronous} sent one at a time`
  );
}

/** One batch in flight, e.g. "in_progress at the provider, 80 requests, for 12 min (since
 * 2026-12-06T21:05:00Z)". */
export function batchInFlightText(b: BatchInFlight, now: number): string {
  const elapsed = elapsedWords(b.since, now);
  return `${b.status} at the provider, ${plural(b.requests, 'request')}, ${elapsed ? `for ${elapsed} (since ${b.since})` : 'since an unknown time'}`;
}

/** The lines `driftline sweep status` prints under a sweep: the counts, then each batch in flight
 * with its provider, model and ID; none for a sweep without batches. */
export function sweepBatchesLines(v: SweepBatchCounts | undefined, now = Date.now()): string[] {
  if (!v) return [];
  return [
    `LLM batches: ${batchCountsText(v)}`,
    ...v.batches.map((b) => `  ${b.provider}/${b.model} ${b.id}: ${batchInFlightText(b, now)}`),
  ];
}
