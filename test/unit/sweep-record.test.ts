// The results-database row of a finished run (engines/sweeps/record.ts): a refusal keeps who
// decided (attempt statuses, the screen's reason), and an equivalence check the screen refused
// counts as not measured, not as "not equivalent".
import { describe, expect, it } from 'vitest';
import { recordFromResult } from '../../engines/sweeps/record';
import { DEFAULT_RUN_CONFIG } from '../../common/run-config-schema';
import type { FormalizeResult } from '../../common/run-types';

const id = {
  sweepId: 'sw',
  cell: { name: 'A', hash: 'h' },
  item: { id: 'i0', goldPremises: [], tags: {} },
  sample: 0,
  workflowId: 'sw/A/i0/0',
};
const none = { proved: false, withoutHypothesis: [], tried: 0 };

function result(over: Partial<FormalizeResult>): FormalizeResult {
  return {
    statement: 's',
    library: 'mini',
    config: DEFAULT_RUN_CONFIG,
    formalStatement: 'x',
    compiled: false,
    checked: false,
    outcome: 'refused',
    attempts: [
      { round: 0, statement: 'x', compile: { status: 'error', messages: [], durationMs: 3 } },
      {
        round: 1,
        statement: 'x',
        compile: {
          status: 'refused',
          messages: [{ severity: 'error', line: 1, column: 0, text: 'refused before Lean: `#eval` starts a command' }],
          reason: '`#eval` starts a command',
          durationMs: 0,
        },
      },
    ],
    judge: null,
    subqueries: [],
    premises: [],
    examples: [],
    notes: [],
    stages: [],
    ...over,
  };
}

describe('sweep run records', () => {
  it('keep each attempt’s status and the screen’s reason', () => {
    const r = recordFromResult(id, result({}), new Date(0));
    expect(r).toMatchObject({ outcome: 'refused', checked: false, refusal: '`#eval` starts a command' });
    expect(r.attempts).toEqual([
      { round: 0, compiled: false, status: 'error' },
      { round: 1, compiled: false, status: 'refused' },
    ]);
  });

  it('count a refused gold statement as no equivalence check, and a real one as such', () => {
    const refusedGold = {
      equivalent: false,
      candidateToGold: none,
      goldToCandidate: none,
      refused: 'gold' as const,
      reason: 'refused before Lean: x',
      durationMs: 0,
    };
    expect(
      recordFromResult(id, result({ outcome: 'compiled', compiled: true, checked: true, equivalence: refusedGold }), new Date(0))
        .equivalent,
    ).toBeNull();
    expect(
      recordFromResult(
        id,
        result({
          outcome: 'compiled',
          compiled: true,
          checked: true,
          equivalence: { ...refusedGold, refused: undefined, reason: undefined },
        }),
        new Date(0),
      ).equivalent,
    ).toBe(false);
    expect(recordFromResult(id, result({ outcome: 'compiled' }), new Date(0)).refusal).toBeUndefined();
  });
});
