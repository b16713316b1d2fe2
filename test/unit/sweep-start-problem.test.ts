// The rules every door applies before a sweep starts (client/sweep-prepare.ts): batch mode is
// refused, saying how to turn it on, when the stack serves none.
import { describe, expect, it } from 'vitest';
import { sweepStartProblem } from '../../client/sweep-prepare';
import type { SweepSpec } from '../../engines/sweeps/sweep-file';

const spec = (batch: boolean): SweepSpec => ({
  benchmarks: [{ path: '/data/b.jsonl', format: 'rautoformalizer' }],
  library: 'mini',
  samples: 1,
  window: 4,
  maxAttempts: 2,
  leaveOut: 'item',
  configurations: [{ name: 'drift', config: {} }],
  ...(batch ? { llm: { batch: true } } : {}),
});

describe('sweep start rules', () => {
  it('refuses batch mode on a stack that serves none, and says how to turn it on', () => {
    expect(sweepStartProblem(spec(true), { libraries: ['mini'], providerNames: ['default'], batchMode: false })).toMatch(
      /^llm\.batch: batch mode was asked for, but the stack has no batch-capable LLM provider.*DRIFTLINE_LLM_BATCH=1/,
    );
    expect(sweepStartProblem(spec(true), { libraries: ['mini'], providerNames: ['default'], batchMode: true })).toBeNull();
    // A sweep not in batch mode is not asked about it.
    expect(sweepStartProblem(spec(false), { libraries: ['mini'], providerNames: ['default'], batchMode: false })).toBeNull();
  });
});
