// `driftline check`'s lines and summary (bin/check-command.ts): a statement not checked says why,
// and the summary counts every statement once.
import { describe, expect, it } from 'vitest';
import { checkLine, checksSummaryLine } from '../../bin/check-command';
import { summarizeChecks } from '../../client/checks';
import { refusedItemResult, type CheckItemResult } from '../../common/checks';
import { SKIPPED_REASON } from '../../engines/lean/runner-contract';

const skipped: CheckItemResult = { id: 'good', compiled: false, status: 'skipped', messages: [], reason: SKIPPED_REASON, durationMs: 0 };
const ok: CheckItemResult = { id: 'a', compiled: true, status: 'ok', messages: [], durationMs: 12 };
const refused = refusedItemResult({ id: 'bad', statement: 'x', refused: { reason: 'statement is refused before Lean: `#eval`' } });

describe('driftline check lines', () => {
  it('say why a statement was not checked: no Lean configured', () => {
    expect(checkLine(0, skipped)).toBe(`good: skipped (${SKIPPED_REASON}) [0 ms]`);
    expect(checkLine(0, skipped)).toMatch(/No Lean REPL configured \(set LEAN_REPL_CMD\)/);
    expect(checkLine(1, refused)).toBe('bad: refused (statement is refused before Lean: `#eval`) [0 ms]');
    expect(checkLine(2, { ...ok, id: undefined })).toBe('#3: ok [12 ms]');
  });

  it('end with a summary that counts the skipped ones too, so the counts add up to the total', () => {
    const summary = summarizeChecks([skipped, refused, ok, { ...skipped, id: 'other' }]);
    expect(summary).toMatchObject({ total: 4, compiled: 1, rejected: 0, refused: 1, failed: 0, skipped: 2 });
    expect(summary.compiled + summary.rejected + summary.refused + summary.failed + summary.skipped).toBe(summary.total);
    expect(checksSummaryLine(summary)).toBe(
      '4 checked: 1 compiled, 0 rejected by Lean, 1 refused by the screen, 0 failed, 2 not checked (no Lean configured)',
    );
    // With Lean, nothing is skipped and the line is as before.
    expect(checksSummaryLine(summarizeChecks([ok, refused]))).toBe(
      '2 checked: 1 compiled, 0 rejected by Lean, 1 refused by the screen, 0 failed',
    );
  });
});
