// What the Temporal UI shows of a run: readable IDs, summary, static and current details.
import { describe, expect, it } from 'vitest';
import { adHocRunId, configInWords, runCurrentDetails, runStaticDetails, runSummary, statementSlug } from '../../common/run-metadata';
import { DEFAULT_RUN_CONFIG } from '../../common/run-config-schema';

describe('run metadata for the Temporal UI', () => {
  it('names ad-hoc runs by the first words of the statement', () => {
    expect(statementSlug('Every prime greater than 2 is odd.')).toBe('every-prime-greater-than-2-is-odd');
    expect(statementSlug('Für alle n ∈ ℕ gilt n ≥ 0')).toBe('fur-alle-n-n-gilt-n-0');
    expect(statementSlug('∀ ε > 0, ∃ δ')).toBe('0');
    expect(statementSlug('∀ ε, ∃ δ')).toBe('statement');
    expect(statementSlug('a'.repeat(100))).toHaveLength(40);
    const slug = statementSlug('Let p be a prime of the form 4t+3. Then a is a primitive root modulo p iff -a has order (p-1)/2.');
    expect(slug.length).toBeLessThanOrEqual(40);
    expect(slug).toBe('let-p-be-a-prime-of-the-form-4t-3-then-a');
    expect(adHocRunId('Every prime greater than 2 is odd.', '0123456789abcdef')).toBe(
      'formalize-every-prime-greater-than-2-is-odd-0123456789ab',
    );
  });

  it('keeps the summary within the UI limit of 200 bytes, on one line', () => {
    const summary = runSummary(`${'ζ(s) '.repeat(30)}\nsecond line`);
    expect(new TextEncoder().encode(summary).length).toBeLessThanOrEqual(200);
    expect(summary).not.toContain('\n');
    expect(runSummary('Every prime greater than 2 is odd.')).toBe('Every prime greater than 2 is odd.');
  });

  it('says the configuration in words', () => {
    expect(configInWords(DEFAULT_RUN_CONFIG)).toBe('DRIFT retrieval (decomposed), 3 examples, up to 3 repair rounds, judged');
    expect(
      configInWords({ ...DEFAULT_RUN_CONFIG, retrieval: 'monolithic', topK: 7, illustrate: false, repairRounds: 0, judge: false }),
    ).toBe('monolithic retrieval, top 7, no examples, no repair, not judged');
  });

  it('details name library, configuration, index version and outcome', () => {
    const statics = runStaticDetails({ library: 'connf', config: DEFAULT_RUN_CONFIG });
    expect(statics).toContain('**Library** connf');
    expect(statics).toContain('drift+decomp+ill3+rep3+judge');

    const running = runCurrentDetails({ library: 'connf', config: DEFAULT_RUN_CONFIG, stage: 'repair', round: 2 });
    expect(running).toContain('**Stage** repair (repair round 2)');
    expect(running).toContain('not opened yet');

    const done = runCurrentDetails({
      library: 'connf',
      config: DEFAULT_RUN_CONFIG,
      stage: 'done',
      round: 3,
      indexVersion: 'connf-03d63981038f-lexical-s1t1',
      outcome: 'not-compiled',
      compile: 'round 3: error (2 errors)',
    });
    expect(done).toMatch(/^\*\*Outcome\*\* NOT COMPILED/);
    expect(done).toContain('**Index version** connf-03d63981038f-lexical-s1t1');
    expect(done).toContain('**Lean** round 3: error (2 errors)');
  });

  it('details of a refused run say the screen decided, never Lean', () => {
    const refused = runCurrentDetails({
      library: 'connf',
      config: DEFAULT_RUN_CONFIG,
      stage: 'done',
      round: 1,
      outcome: 'refused',
      refusal: '`#eval` runs code',
      compile: 'round 1: refused by the screen: `#eval` runs code',
      compileBy: 'screen',
    });
    expect(refused).toMatch(/^\*\*Outcome\*\* REFUSED by the screen before Lean \(Lean never saw the last attempt\): `#eval` runs code/);
    expect(refused).toContain('**Screen** (Lean never saw it) round 1: refused by the screen: `#eval` runs code');
    expect(refused).not.toMatch(/NOT COMPILED|\*\*Lean\*\*|Lean rejected/);
  });
});
