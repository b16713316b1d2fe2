// Judge calibration: run the judge over human-labelled statements and measure how often its
// "faithful" agrees with the humans' "equivalent", and how often two judge models agree with
// each other (the agent paper validates its judge by cross-judge agreement).
import type { JudgeVerdict } from '../../common/run-types';
import type { LlmClient } from '../llm/client';
import { judgeStatement } from '../llm/stages';
import { agreement, type AgreementWithIntervals, type BootstrapOptions } from './agreement';
import type { LabelledItem } from './human-labels';

export interface JudgeUnderTest {
  /** Shown in the report: the model name. */
  label: string;
  llm: LlmClient;
}

export interface JudgeEvalOptions extends BootstrapOptions {
  /** A grade at or above this (on a statement that type-checks) counts as faithful. */
  threshold: number;
  /** Replaces the judge's instructions (the rubric); default: the service's own. */
  rubric?: string;
  /** Judge calls in flight at once. */
  concurrency: number;
  onProgress?: (done: number, total: number) => void;
}

export interface ItemVerdict {
  id: string;
  judge: string;
  equivalent: boolean;
  grade?: number;
  faithful?: boolean;
  error?: string;
}

export interface JudgeReport {
  threshold: number;
  items: number;
  judges: {
    model: string;
    /** Items the judge gave no verdict for (the call failed), left out of its statistics. */
    errors: number;
    /** Agreement with the human labels, over all sets and per set. */
    all: AgreementWithIntervals;
    sets: Record<string, AgreementWithIntervals>;
  }[];
  /** Agreement of the second judge with the first, on items both judged. */
  crossJudge?: AgreementWithIntervals & { models: [string, string] };
  verdicts: ItemVerdict[];
}

/** Runs `work` over `items` with at most `limit` in flight, keeping the input order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  });
  await Promise.all(runners);
  return out;
}

async function judgeOne(judge: JudgeUnderTest, item: LabelledItem, opts: JudgeEvalOptions): Promise<ItemVerdict> {
  const base = { id: item.id, judge: judge.label, equivalent: item.equivalent };
  try {
    const v: JudgeVerdict = await judgeStatement(
      judge.llm,
      { statement: item.informal, formalStatement: item.candidate, compiled: item.typechecks, checked: true },
      undefined,
      opts.rubric !== undefined ? { rubric: opts.rubric } : {},
    );
    return { ...base, grade: v.grade, faithful: item.typechecks && v.grade >= opts.threshold };
  } catch (err) {
    return { ...base, error: err instanceof Error ? err.message : String(err) };
  }
}

export async function runJudgeEval(
  items: readonly LabelledItem[],
  judges: readonly JudgeUnderTest[],
  opts: JudgeEvalOptions,
): Promise<JudgeReport> {
  if (judges.length === 0 || judges.length > 2) throw new Error('judge calibration takes one or two judge models');
  const total = items.length * judges.length;
  let done = 0;
  const perJudge: ItemVerdict[][] = [];
  for (const judge of judges) {
    perJudge.push(
      await mapLimited(items, opts.concurrency, async (item) => {
        const v = await judgeOne(judge, item, opts);
        opts.onProgress?.(++done, total);
        return v;
      }),
    );
  }
  const boot = { resamples: opts.resamples, seed: opts.seed };
  const sets = [...new Set(items.map((i) => i.set))];
  const report: JudgeReport = {
    threshold: opts.threshold,
    items: items.length,
    judges: judges.map((judge, j) => {
      const ok = perJudge[j]!.map((v, i) => ({ v, item: items[i]! })).filter(({ v }) => v.faithful !== undefined);
      const pairs = (rows: typeof ok) => rows.map(({ v }) => ({ reference: v.equivalent, predicted: v.faithful! }));
      return {
        model: judge.label,
        errors: items.length - ok.length,
        all: agreement(pairs(ok), boot),
        sets: Object.fromEntries(sets.map((s) => [s, agreement(pairs(ok.filter(({ item }) => item.set === s)), boot)])),
      };
    }),
    verdicts: perJudge.flat(),
  };
  if (judges.length === 2) {
    const pairs = perJudge[0]!.flatMap((a, i) => {
      const b = perJudge[1]![i]!;
      return a.faithful !== undefined && b.faithful !== undefined ? [{ reference: a.faithful, predicted: b.faithful }] : [];
    });
    report.crossJudge = { ...agreement(pairs, boot), models: [judges[0]!.label, judges[1]!.label] };
  }
  return report;
}

const pct = (x: number | null): string => (x === null ? '–' : (100 * x).toFixed(1));
const kap = (x: number | null): string => (x === null ? '–' : x.toFixed(3));

function row(name: string, a: AgreementWithIntervals): string {
  const ci = (k: 'accuracy' | 'precision' | 'recall', f = pct) => (a.ci[k] ? ` [${f(a.ci[k]!.lo)}, ${f(a.ci[k]!.hi)}]` : '');
  const kci = a.ci.kappa ? ` [${kap(a.ci.kappa.lo)}, ${kap(a.ci.kappa.hi)}]` : '';
  const c = a.confusion;
  return `| ${name} | ${a.n} | ${c.tp}/${c.fp}/${c.fn}/${c.tn} | ${pct(a.accuracy)}${ci('accuracy')} | ${pct(a.precision)}${ci('precision')} | ${pct(a.recall)}${ci('recall')} | ${kap(a.kappa)}${kci} |`;
}

/** The report as Markdown: one table per judge (humans as reference), then judge against judge. */
export function judgeReportMarkdown(r: JudgeReport): string {
  const head = "| set | n | TP/FP/FN/TN | accuracy % | precision % | recall % | Cohen's κ |\n| --- | ---: | --- | --- | --- | --- | --- |";
  const out: string[] = [
    `Judge against human equivalence labels: faithful = type-checks ∧ grade ≥ ${r.threshold}; ${r.items} statements; 95% bootstrap intervals over statements.`,
  ];
  for (const j of r.judges) {
    out.push('', `**${j.model}**${j.errors ? ` (${j.errors} without a verdict, left out)` : ''}`, '', head);
    for (const [s, a] of Object.entries(j.sets)) out.push(row(s, a));
    out.push(row('all', j.all));
  }
  if (r.crossJudge) {
    out.push(
      '',
      `**${r.crossJudge.models[1]} against ${r.crossJudge.models[0]}** (first judge as reference)`,
      '',
      head,
      row('all', r.crossJudge),
    );
  }
  return out.join('\n');
}
