// A sweep's provider batches in words, as `driftline sweep status` prints them and the web card
// shows them: the counts, and each batch in flight with its requests, since when and its status
// at the provider.
import { describe, expect, it } from 'vitest';
import { batchCountsText, elapsedWords, sweepBatchesLines } from '../../common/sweep-batches-text';
import type { SweepBatchesView } from '../../common/wire';

const NOW = Date.parse('2026-12-06T22:00:00.000Z');
const view: SweepBatchesView = {
  inFlight: 2,
  submitted: 5,
  completed: 2,
  failed: 1,
  requests: 410,
  resubmitted: 12,
  synchronous: 1,
  batches: [
    { id: 'batch_a', provider: 'default', model: 'gpt-4.1-mini', status: 'in_progress', requests: 200, since: '2026-12-06T19:48:30.000Z' },
    { id: 'batch_b', provider: 'cheap', model: 'm', status: 'finalizing', requests: 1, since: '2026-12-06T21:59:15.000Z' },
  ],
};

describe("a sweep's batches in words", () => {
  it('prints the counts, then each batch in flight with its provider, model, ID, status, requests and age', () => {
    expect(sweepBatchesLines(view, NOW)).toEqual([
      'LLM batches: 2 in flight; 5 submitted, 2 completed, 1 failed; 410 requests, 12 resubmitted, 1 sent one at a time',
      '  default/gpt-4.1-mini batch_a: in_progress at the provider, 200 requests, for 2 h 11 min (since 2026-12-06T19:48:30.000Z)',
      '  cheap/m batch_b: finalizing at the provider, 1 request, for 45 s (since 2026-12-06T21:59:15.000Z)',
    ]);
  });

  it('prints nothing for a sweep without batches, and says when none was submitted yet', () => {
    expect(sweepBatchesLines(undefined, NOW)).toEqual([]);
    const none = { ...view, inFlight: 0, submitted: 0, completed: 0, failed: 0, requests: 0, resubmitted: 0, synchronous: 0, batches: [] };
    expect(batchCountsText(none)).toBe('none submitted yet');
    expect(sweepBatchesLines(none, NOW)).toEqual(['LLM batches: none submitted yet']);
  });

  it("says so when a batch's time does not read as one, and never counts back from the future", () => {
    expect(elapsedWords('not a time', NOW)).toBeUndefined();
    expect(elapsedWords('2026-12-06T22:05:00.000Z', NOW)).toBe('0 s');
    expect(elapsedWords('2026-12-06T21:48:00.000Z', NOW)).toBe('12 min');
    const odd = { ...view, batches: [{ ...view.batches[0]!, since: 'yesterday' }] };
    expect(sweepBatchesLines(odd, NOW)[1]).toBe(
      '  default/gpt-4.1-mini batch_a: in_progress at the provider, 200 requests, since an unknown time',
    );
  });
});
