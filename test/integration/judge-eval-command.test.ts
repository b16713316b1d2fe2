// `driftline eval judge` end to end against the fake OpenAI server: two small labelled sets of
// our own, two judge models that grade by different rules, statistics checked against counts
// worked out by hand from those rules.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { evalJudge, type EvalJudgeOptions } from '../../bin/judge-eval-command';
import { LabelDataError } from '../../engines/judge-eval/human-labels';
import { startFakeOpenAI, type FakeOpenAI, type FakeRequest } from '../fakes/openai-server';

const CORPUS = resolve('test/fixtures/corpus/mini.jsonl');
// name → [candidate, typechecks, human label]
const SETS: Record<string, Record<string, [string, boolean, boolean][]>> = {
  first: {
    'Book.a': [['theorem thm_Q : ∀ x : ℕ, x = x := by sorry', true, true]],
    'Book.b': [['theorem thm_Q : (1 : ℕ) = 1 := by sorry', true, false]],
    'Book.c': [['theorem thm_Q : ∀ y : ℤ, y = y := by sorry', true, false]],
  },
  second: {
    'Book.d': [['theorem thm_Q : (2 : ℕ) = 2 := by sorry', false, true]],
    'Book.e': [['theorem thm_Q : ∀ z : ℝ, z = z := by sorry', true, true]],
  },
};

/** judge-strict grades 10 a statement with a ∀ and 4 otherwise; judge-lenient grades all 9. */
function judgeRule(req: FakeRequest) {
  const user = req.messages.find((m) => m.role === 'user')!.content;
  const code = user.slice(user.indexOf('```lean'));
  const grade = req.model === 'judge-lenient' ? 9 : code.includes('∀') ? 10 : 4;
  return { content: JSON.stringify({ grade, faithful: grade >= 9, explanation: `graded ${grade} by rule` }) };
}

let dir: string;
let fake: FakeOpenAI;
let dataDirs: string[];
let benchmark: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-judge-eval-'));
  benchmark = join(dir, 'bench.jsonl');
  const names = Object.values(SETS).flatMap((s) => Object.keys(s));
  writeFileSync(
    benchmark,
    names
      .map((n) => JSON.stringify({ full_name: n, informal_stmt: `Informal ${n}.`, formal_stmt: `theorem thm_P : True := sorry` }))
      .join('\n') + '\n',
  );
  dataDirs = Object.entries(SETS).map(([set, items]) => {
    const d = join(dir, set);
    mkdirSync(d);
    const preds: Record<string, unknown[]> = {};
    const labels: Record<string, boolean> = {};
    for (const [name, cands] of Object.entries(items)) {
      preds[name] = cands.map(([c, ok]) => ({ formal_stmt_pred: c, typecheck_result: { is_success: ok } }));
      for (const [c, , label] of cands) labels[c] = label;
    }
    writeFileSync(join(d, 'autoformalization.json'), JSON.stringify(preds));
    writeFileSync(join(d, 'labels.json'), JSON.stringify(labels));
    return d;
  });
  fake = await startFakeOpenAI({ handler: judgeRule });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const cfg = () =>
  loadConfig({ env: { DRIFTLINE_LIBRARIES: `mini=${CORPUS}`, OPENAI_BASE_URL: fake.url, DRIFTLINE_MODEL_JUDGE: 'judge-strict' } });
const opts = (o: Partial<EvalJudgeOptions> = {}): EvalJudgeOptions => ({
  data: dataDirs,
  benchmark,
  threshold: 9,
  concurrency: 2,
  seed: 1,
  resamples: 200,
  json: true,
  ...o,
});

describe('driftline eval judge', () => {
  it('measures agreement with the human labels and between two judges', async () => {
    const out = JSON.parse(await evalJudge(cfg(), opts({ secondModel: 'judge-lenient' })));
    expect(out.items).toBe(5);
    const [strict, lenient] = out.judges;
    expect(strict.model).toBe('judge-strict');
    // strict says faithful for a, c, e (d did not type-check): a TP, b TN, c FP, d FN, e TP.
    expect(strict.all.confusion).toEqual({ tp: 2, fp: 1, fn: 1, tn: 1 });
    expect(strict.all.accuracy).toBeCloseTo(0.6, 12);
    expect(strict.all.precision).toBeCloseTo(2 / 3, 12);
    expect(strict.all.recall).toBeCloseTo(2 / 3, 12);
    // chance agreement 0.6·0.6 + 0.4·0.4 = 0.52; kappa (0.6 − 0.52) / 0.48.
    expect(strict.all.kappa).toBeCloseTo(0.08 / 0.48, 12);
    expect(strict.sets.first.confusion).toEqual({ tp: 1, fp: 1, fn: 0, tn: 1 });
    expect(strict.sets.second.confusion).toEqual({ tp: 1, fp: 0, fn: 1, tn: 0 });
    // lenient says faithful for everything that type-checks.
    expect(lenient.all.confusion).toEqual({ tp: 2, fp: 2, fn: 1, tn: 0 });
    // lenient against strict: a, c, e both yes; b lenient only; d both no.
    expect(out.crossJudge.models).toEqual(['judge-strict', 'judge-lenient']);
    expect(out.crossJudge.confusion).toEqual({ tp: 3, fp: 1, fn: 0, tn: 1 });
    expect(strict.all.ci.accuracy.lo).toBeLessThanOrEqual(0.6);
    expect(strict.all.ci.accuracy.hi).toBeGreaterThanOrEqual(0.6);
    // Each judge saw each statement once, with the informal statement and Lean's verdict.
    expect(fake.callsTo('judge-strict')).toBe(5);
    const asked = fake.requests.find((r) => r.model === 'judge-strict' && r.messages.some((m) => m.content.includes('Book.d')))!;
    expect(asked.messages.at(-1)!.content).toContain('Accepted by Lean: no');
  });

  it('takes the threshold and the rubric from the options', async () => {
    // At threshold 10 the lenient judge's 9s no longer count.
    const out = JSON.parse(await evalJudge(cfg(), opts({ model: 'judge-lenient', threshold: 10 })));
    expect(out.judges[0].all.confusion).toEqual({ tp: 0, fp: 0, fn: 3, tn: 2 });
    const rubric = join(dir, 'rubric.txt');
    writeFileSync(rubric, 'A rubric of our own: grade 0 to 10.');
    const before = fake.requests.length;
    await evalJudge(cfg(), opts({ rubric, limit: 1 }));
    expect(fake.requests.slice(before)[0]!.messages[0]).toEqual({ role: 'system', content: 'A rubric of our own: grade 0 to 10.' });
  });

  it('prints Markdown tables and writes every verdict on request', async () => {
    const details = join(dir, 'verdicts.jsonl');
    const md = await evalJudge(cfg(), opts({ json: false, details }));
    expect(md).toContain("| set | n | TP/FP/FN/TN | accuracy % | precision % | recall % | Cohen's κ |");
    expect(md).toMatch(/\| all \| 5 \| 2\/1\/1\/1 \| 60\.0 \[/);
    const lines = readFileSync(details, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    expect(lines.find((l) => l.id === 'second/Book.d#0')).toMatchObject({ equivalent: true, faithful: false, judge: 'judge-strict' });
  });

  it('names the file and item when the labelled data is incomplete', async () => {
    const bad = join(dir, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'autoformalization.json'), JSON.stringify({ 'Book.zzz': [{ formal_stmt_pred: 'x' }] }));
    writeFileSync(join(bad, 'labels.json'), '{}');
    await expect(evalJudge(cfg(), opts({ data: [bad] }))).rejects.toThrow(LabelDataError);
    await expect(evalJudge(cfg(), opts({ data: [bad] }))).rejects.toThrow(
      /autoformalization\.json: item "Book\.zzz" is not in the benchmark/,
    );
  });
});
