// A rescore's pieces that need no Temporal: the judge choice and the cell configuration it
// gives, the faithful rule at a threshold, which sources are carried over, the record of a
// rescored unit, and the report's judges-side-by-side section.
import { describe, expect, it } from 'vitest';
import { carriedReason, faithfulAt, parseJudgeChoice, rejudgeInput, rescoreConfig, type RejudgeResult } from '../../common/rescore';
import { DEFAULT_RUN_CONFIG } from '../../common/run-config-schema';
import { rescoredRecord } from '../../engines/sweeps/rescore-record';
import { buildReportData } from '../../engines/report/report-data';
import { renderMarkdown } from '../../engines/report/markdown';
import { metricsCsv } from '../../engines/report/csv';
import { toCsv } from '../../engines/results/export';
import { rubricProblem } from '../../client/sweep-rescore';
import { runRecord } from '../helpers/sweep-records';

describe('the judge choice', () => {
  it('reads provider and provider:model (a model may hold ":"), and refuses a bad provider name', () => {
    expect(parseJudgeChoice('big')).toEqual({ provider: 'big' });
    expect(parseJudgeChoice('local:llama3:8b')).toEqual({ provider: 'local', model: 'llama3:8b' });
    expect(parseJudgeChoice('big:')).toEqual({ provider: 'big' });
    expect(parseJudgeChoice('no such')).toBeNull();
    expect(parseJudgeChoice(':m')).toBeNull();
  });

  it("moves the cell's judge to the provider, leaving other roles and dropping a judge model of another provider", () => {
    const config = { retrieval: 'none' as const, judge: false, providers: { formalizer: 'a' }, models: { judge: 'old', formalizer: 'f' } };
    expect(rescoreConfig(config, { provider: 'b' })).toEqual({
      retrieval: 'none',
      judge: true,
      providers: { formalizer: 'a', judge: 'b' },
      models: { formalizer: 'f' },
    });
    expect(rescoreConfig({}, { provider: 'b', model: 'm' })).toEqual({ judge: true, providers: { judge: 'b' }, models: { judge: 'm' } });
    expect(rescoreConfig({}, { provider: 'b' })).toEqual({ judge: true, providers: { judge: 'b' } });
  });

  it('names the source unit and sends the gold only when the equivalence check runs again', () => {
    const unit = {
      sweepId: 'new',
      cell: 'drift',
      itemId: 'Demo.x',
      sample: 2,
      statement: 's',
      library: 'mini',
      config: DEFAULT_RUN_CONFIG,
      goldStatement: 'theorem g : True := by sorry',
    };
    const without = rejudgeInput({ of: 'old', judge: { provider: 'b' }, threshold: 9, equivalence: false }, unit);
    expect(without).toMatchObject({ source: 'old/drift/Demo.x/2', sweepId: 'new', threshold: 9, sample: 2 });
    expect(without.goldStatement).toBeUndefined();
    expect(rejudgeInput({ of: 'old', judge: { provider: 'b' }, threshold: 7, equivalence: true }, unit).goldStatement).toBe(
      unit.goldStatement,
    );
  });
});

describe('the faithful rule at a threshold, and what is carried over', () => {
  it('is faithful only where Lean accepted the statement and the grade reaches the threshold', () => {
    const ok = { compiled: true, checked: true, refused: false };
    expect(faithfulAt(7, 7, ok)).toBe(true);
    expect(faithfulAt(6, 7, ok)).toBe(false);
    expect(faithfulAt(10, 0, { ...ok, compiled: false })).toBe(false);
    expect(faithfulAt(10, 0, { ...ok, checked: false })).toBe(false);
    expect(faithfulAt(10, 0, { ...ok, refused: true })).toBe(false);
  });

  it('carries a missing, failed or unjudged source, and judges the rest again', () => {
    const base = {
      workflowId: 'w',
      outcome: 'unfaithful' as const,
      compiled: true,
      checked: true,
      formalStatement: 'x',
      judgeGrade: 5,
      faithful: false,
      equivalent: null,
    };
    expect(carriedReason(null)).toBe('the source sweep has no record of this unit');
    expect(carriedReason({ ...base, outcome: 'failed', error: 'LLM down' })).toBe('the source run failed: LLM down');
    expect(carriedReason({ ...base, outcome: 'compiled', judgeGrade: null, faithful: null })).toBe('the source run was not judged');
    expect(carriedReason(base)).toBeNull();
    expect(carriedReason({ ...base, outcome: 'not-compiled', compiled: false })).toBeNull();
  });
});

function rejudged(over: Partial<RejudgeResult>): RejudgeResult {
  return {
    statement: 's',
    library: 'mini',
    config: DEFAULT_RUN_CONFIG,
    formalStatement: 'x',
    compiled: true,
    checked: true,
    outcome: 'faithful',
    attempts: [],
    judge: { grade: 10, faithful: true, explanation: 'same' },
    subqueries: [],
    premises: [],
    examples: [],
    notes: [],
    stages: ['judge'],
    timings: { judge: 12 },
    usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    rescore: { source: 'old/A/i0/0', sourceOutcome: 'unfaithful', sourceJudgeGrade: 6, sourceFaithful: false },
    ...over,
  };
}

describe('the record of a rescored unit', () => {
  const id = {
    sweepId: 'new',
    cell: { name: 'A', hash: 'h2' },
    item: { id: 'i0', goldPremises: ['p'], tags: { d: 'x' } },
    sample: 0,
    workflowId: 'new/A/i0/0',
  };
  const source = runRecord({
    sweepId: 'old',
    config: 'A',
    item: 'i0',
    compiled: true,
    outcome: 'unfaithful',
    judgeGrade: 6,
    faithful: false,
    equivalent: true,
    premises: ['Nat.Prime'],
    attempts: [
      { round: 0, compiled: false, status: 'error' },
      { round: 1, compiled: true, status: 'ok' },
    ],
    repairRounds: 1,
    stageMs: { formalize: 900, compile: 400 },
    usage: { promptTokens: 900, completionTokens: 100, totalTokens: 1000 },
  });

  it("keeps the source's statement and compile results, with the new verdict beside the source's", () => {
    const r = rescoredRecord(id, source, rejudged({}), new Date(0));
    expect(r).toMatchObject({
      sweepId: 'new',
      config: 'A',
      configHash: 'h2',
      workflowId: 'new/A/i0/0',
      item: 'i0',
      outcome: 'faithful',
      compiled: true,
      checked: true,
      equivalent: true,
      judgeGrade: 10,
      faithful: true,
      sourceJudgeGrade: 6,
      sourceFaithful: false,
      rescoreOf: 'old/A/i0/0',
      repairRounds: 1,
      premises: ['Nat.Prime'],
      formalStatement: source.formalStatement,
      // Its own time and tokens: the judge's, not the source run's.
      stageMs: { judge: 12 },
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
    expect(r.attempts).toEqual(source.attempts);
    expect(r.carried).toBeUndefined();
  });

  it("takes the equivalence check's new answer when it ran again", () => {
    const direction = { proved: false, withoutHypothesis: [], tried: 1 };
    const equivalence = { equivalent: false, candidateToGold: direction, goldToCandidate: direction, durationMs: 5 };
    expect(rescoredRecord(id, source, rejudged({ equivalence }), new Date(0)).equivalent).toBe(false);
    expect(rescoredRecord(id, source, rejudged({ equivalence: null }), new Date(0)).equivalent).toBeNull();
    // A comparison that could not be made, or that a forged reply ended, is not measured; a
    // source's "not comparable" does not outlive a new answer.
    const notComparable = { ...equivalence, notComparable: true, reason: 'not comparable: definitions differ.' };
    expect(rescoredRecord(id, source, rejudged({ equivalence: notComparable }), new Date(0))).toMatchObject({
      equivalent: null,
      notComparable: true,
    });
    expect(
      rescoredRecord(id, source, rejudged({ equivalence: { ...equivalence, refusedBy: 'tampering' } }), new Date(0)).equivalent,
    ).toBeNull();
    const wasNotComparable = { ...source, equivalent: null, notComparable: true as const };
    const again = rescoredRecord(id, wasNotComparable, rejudged({ equivalence: { ...equivalence, equivalent: true } }), new Date(0));
    expect(again.equivalent).toBe(true);
    expect(again.notComparable).toBeUndefined();
  });

  it('carries a source that was not judged or failed, with no verdict of its own', () => {
    const unjudged = runRecord({ sweepId: 'old', config: 'A', item: 'i0', compiled: true, outcome: 'compiled', equivalent: true });
    const r = rescoredRecord(
      id,
      unjudged,
      rejudged({
        judge: null,
        outcome: 'compiled',
        // With --equivalence a carried unit's result says null: the source's check stands.
        equivalence: null,
        rescore: {
          source: 'old/A/i0/0',
          sourceOutcome: 'compiled',
          sourceJudgeGrade: null,
          sourceFaithful: null,
          carried: 'the source run was not judged',
        },
      }),
      new Date(0),
    );
    expect(r).toMatchObject({
      outcome: 'compiled',
      equivalent: true,
      judgeGrade: null,
      faithful: null,
      sourceJudgeGrade: null,
      carried: 'the source run was not judged',
    });
    const missing = rescoredRecord(
      id,
      null,
      rejudged({
        judge: null,
        outcome: 'failed',
        rescore: {
          source: 'old/A/i0/0',
          sourceOutcome: null,
          sourceJudgeGrade: null,
          sourceFaithful: null,
          carried: 'the source sweep has no record of this unit',
        },
      }),
      new Date(0),
    );
    expect(missing).toMatchObject({
      outcome: 'failed',
      compiled: false,
      error: 'the source sweep has no record of this unit',
      tags: { d: 'x' },
    });
  });
});

describe("the report's judges side by side", () => {
  const rescore = { of: 'old', judge: 'b:m', threshold: 9, equivalence: false };
  // Configuration A: 4 items; the judges agree on 2 (both faithful on i0, neither on i1), the
  // source alone says faithful on i2, the new judge alone on i3; i4 did not compile (left out).
  //   p_o = 2/4; each judge says faithful 2/4; p_e = 0.5·0.5 + 0.5·0.5 = 0.5; κ = 0.
  const verdicts: [string, boolean, boolean, boolean][] = [
    ['i0', true, true, true],
    ['i1', false, false, true],
    ['i2', true, false, true],
    ['i3', false, true, true],
    ['i4', false, false, false],
  ];
  const records = [
    ...verdicts.map(([item, src, now, compiled]) =>
      runRecord({
        sweepId: 'new',
        config: 'A',
        item,
        compiled,
        outcome: compiled ? (now ? 'faithful' : 'unfaithful') : 'not-compiled',
        judgeGrade: now ? 10 : 3,
        faithful: now,
        sourceJudgeGrade: src ? 9 : 4,
        sourceFaithful: src,
        rescoreOf: `old/A/${item}/0`,
      }),
    ),
    // Configuration B: both judges call every compiled unit unfaithful: κ undefined.
    ...['i0', 'i1'].map((item) =>
      runRecord({
        sweepId: 'new',
        config: 'B',
        item,
        compiled: true,
        outcome: 'unfaithful',
        judgeGrade: 5,
        faithful: false,
        sourceJudgeGrade: 5,
        sourceFaithful: false,
        rescoreOf: `old/B/${item}/0`,
      }),
    ),
  ];

  it('computes the table and kappa per configuration, and says when kappa is undefined', () => {
    const data = buildReportData({ sweep: { id: 'new', rescore }, records, bootstrap: { resamples: 200 } });
    const [a, b] = data.judgeAgreement!.configs;
    expect(a).toMatchObject({
      config: 'A',
      units: 5,
      judgedByBoth: 5,
      compared: 4,
      table: { both: 1, firstOnly: 1, secondOnly: 1, neither: 1 },
    });
    expect(a!.kappa.estimate).toBeCloseTo(0, 12);
    expect(b).toMatchObject({ config: 'B', compared: 2, table: { both: 0, firstOnly: 0, secondOnly: 0, neither: 2 } });
    expect(b!.kappa).toMatchObject({ estimate: null, interval: null });
    const md = renderMarkdown(data);
    expect(md).toContain('- **rescore**: of sweep old by the judge b:m; faithful: compiled and grade ≥ 9');
    expect(md).toMatch(
      /\| B \| 2 \| 0 \| 2 \| 2 \| 0 \| 0 \| 0 \| 2 \| 100\.0 \| undefined: both judges gave every unit the same single verdict/,
    );
    expect(md).not.toMatch(/NaN/);
    expect(md).toMatch(/\| A \| i2 \| 0 \| 9 \| faithful \| 3 \| unfaithful \|/);
    const metrics = metricsCsv(data);
    expect(metrics).toContain('\r\nA,,,judge_kappa,0,');
    expect(metrics).toMatch(/\r\nB,,,judge_kappa,,,,2\r\n/);
    expect(toCsv(records).split('\r\n')[0]).toMatch(/,sourceJudgeGrade,sourceFaithful,rescoreOf,/);
  });

  it('is absent from the report of a sweep that is not a rescore', () => {
    expect(buildReportData({ sweep: { id: 'x' }, records: [runRecord({ config: 'A', item: 'i' })] }).judgeAgreement).toBeUndefined();
    expect(toCsv([runRecord({ config: 'A', item: 'i' })]).split('\r\n')[0]).toMatch(/,temporalUrl,refusedBy,notComparable$/);
  });

  it('refuses an empty or oversized rubric', () => {
    expect(rubricProblem('  \n')).toBe('the rubric is empty');
    expect(rubricProblem('x'.repeat(16_001))).toMatch(/16001 characters; at most 16000/);
    expect(rubricProblem('grade it')).toBeNull();
  });
});
