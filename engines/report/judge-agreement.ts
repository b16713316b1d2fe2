// The report's section on a rescore: the source judge's verdicts and the new judge's side by
// side, and their agreement per configuration (Cohen's kappa on the faithful verdict, and the
// quadratically weighted kappa on grades, each with its interval over items). Computed from the
// rescore's records alone (each carries the source's grade and verdict). Pure.
import type { SweepRunRecord } from '../../common/sweep';
import type { BootstrapOptions } from '../metrics/bootstrap';
import {
  agreementTable,
  cohensKappa,
  kappaWithInterval,
  weightedKappaWithInterval,
  type AgreementTable,
  type KappaEstimate,
} from '../metrics/kappa';

/** What the rescore was, as the report states it. */
export interface RescoreMeta {
  /** The sweep re-judged. */
  of: string;
  /** The new judge, `provider[:model]`. */
  judge: string;
  threshold: number;
  equivalence: boolean;
  /** The rubric file that replaced the judge's instructions. */
  rubric?: string;
  /** The source's judge as its ledger recorded it (`provider/model`), when known. */
  sourceJudge?: string;
}

export interface ConfigAgreement {
  config: string;
  units: number;
  /** Units whose source was failed or not judged: carried over, not judged again. */
  carried: number;
  /** Units both judges graded. */
  judgedByBoth: number;
  /** Of those, the ones Lean accepted: kappa's units (elsewhere both verdicts are "unfaithful"
   * by rule, whatever either judge thought). */
  compared: number;
  /** Over the compared units: first = the source judge, second = the new one. */
  table: AgreementTable;
  /** Observed and chance agreement (null without compared units). */
  observed: number | null;
  expected: number | null;
  kappa: KappaEstimate;
  /** On the grades of the compared units. */
  weightedKappa: KappaEstimate;
  /** Compared units whose grade differs between the judges. */
  gradeChanged: number;
}

export interface JudgeAgreement {
  rescore: RescoreMeta;
  configs: ConfigAgreement[];
  /** Units whose faithful verdicts differ, side by side. */
  disagreements: {
    config: string;
    item: string;
    sample: number;
    sourceGrade: number;
    grade: number;
    sourceFaithful: boolean;
    faithful: boolean;
  }[];
}

const judgedByBoth = (r: SweepRunRecord): boolean =>
  r.judgeGrade !== null &&
  r.faithful !== null &&
  r.sourceJudgeGrade !== null &&
  r.sourceJudgeGrade !== undefined &&
  typeof r.sourceFaithful === 'boolean';

export function judgeAgreement(records: readonly SweepRunRecord[], rescore: RescoreMeta, opts: BootstrapOptions = {}): JudgeAgreement {
  const configs: string[] = [];
  for (const r of records) if (!configs.includes(r.config)) configs.push(r.config);
  const disagreements: JudgeAgreement['disagreements'] = [];
  const out = configs.map((config): ConfigAgreement => {
    const units = records.filter((r) => r.config === config);
    const both = units.filter(judgedByBoth);
    const compared = both.filter((r) => r.compiled);
    const pairs = compared.map((r) => ({ item: r.item, first: r.sourceFaithful!, second: r.faithful! }));
    const table = agreementTable(pairs);
    const k = cohensKappa(table);
    for (const r of compared)
      if (r.sourceFaithful !== r.faithful)
        disagreements.push({
          config,
          item: r.item,
          sample: r.sample,
          sourceGrade: r.sourceJudgeGrade!,
          grade: r.judgeGrade!,
          sourceFaithful: r.sourceFaithful!,
          faithful: r.faithful!,
        });
    return {
      config,
      units: units.length,
      carried: units.filter((r) => r.carried !== undefined).length,
      judgedByBoth: both.length,
      compared: compared.length,
      table,
      observed: k?.observed ?? null,
      expected: k?.expected ?? null,
      kappa: kappaWithInterval(pairs, opts),
      weightedKappa: weightedKappaWithInterval(
        compared.map((r) => ({ item: r.item, first: r.sourceJudgeGrade!, second: r.judgeGrade! })),
        opts,
      ),
      gradeChanged: compared.filter((r) => r.sourceJudgeGrade !== r.judgeGrade).length,
    };
  });
  return { rescore, configs: out, disagreements };
}

/** `0.40 [0.12, 0.65]`, or why there is no value or no interval. */
export function kappaText(k: KappaEstimate): string {
  if (k.estimate === null) return k.reason ?? 'undefined';
  const est = k.estimate.toFixed(2);
  return k.interval ? `${est} [${k.interval.lo.toFixed(2)}, ${k.interval.hi.toFixed(2)}]` : `${est} (${k.reason ?? 'no interval'})`;
}

/** The rescore in one line, for the report's protocol. */
export function rescoreLine(r: RescoreMeta): string {
  return [
    `of sweep ${r.of}${r.sourceJudge ? ` (judged by ${r.sourceJudge})` : ''} by the judge ${r.judge}`,
    `faithful: compiled and grade ≥ ${r.threshold}`,
    r.rubric ? `rubric from ${r.rubric}` : "the service's rubric",
    r.equivalence ? 'equivalence checked again' : 'equivalence as the source recorded it',
    'nothing formalized or compiled again',
  ].join('; ');
}
