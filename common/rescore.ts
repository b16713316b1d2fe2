// A rescore: a finished sweep judged again by another judge (`driftline sweep rescore`), as a
// sweep of its own whose units are `rejudge` child workflows. The types the CLI, the sweep
// workflow, the rejudge workflow, its activity and the report share, and the few rules they
// must apply alike. Types and pure functions only: the workflow bundle imports it.
import type { LlmCallPolicy } from './llm-call-policy';
import type { RunConfig } from './run-config-schema';
import type { Outcome } from './outcomes';
import type { FormalizeResult } from './run-types';

/** The judge a rescore asks: a configured provider, and a model there (absent: the provider's
 * own, else the deployment's judge model). */
export interface JudgeChoice {
  provider: string;
  model?: string;
}

/** What a rescore sweep was started with (kept in its row's spec as `rescore`). */
export interface RescoreSpec {
  /** The sweep re-judged. */
  of: string;
  judge: JudgeChoice;
  /** faithful = compiled ∧ grade ≥ threshold. */
  threshold: number;
  /** Also run the BEq+ equivalence check again (Lean queue) where the item has a gold. */
  equivalence: boolean;
  /** A rubric replacing the judge's instructions: the file it was read from (for the report)
   * and its text, which goes to the LLM only as the judge's system prompt. */
  rubric?: { file: string; text: string; sha256: string };
}

/** The part of a rescore the sweep workflow carries (the rubric stays in the database). */
export type SweepRescore = Omit<RescoreSpec, 'rubric'>;

/** `provider` or `provider:model` (a model name may itself contain ':'); null when the provider
 * part is not a usable provider name. */
export function parseJudgeChoice(text: string): JudgeChoice | null {
  const colon = text.indexOf(':');
  const provider = colon < 0 ? text : text.slice(0, colon);
  const model = colon < 0 ? '' : text.slice(colon + 1);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(provider) || model.length > 200) return null;
  return model ? { provider, model } : { provider };
}

export function judgeLabel(judge: JudgeChoice): string {
  return judge.model ? `${judge.provider}:${judge.model}` : judge.provider;
}

/** A source cell's configuration with the judge moved to the chosen provider (and model: a
 * model named for another provider is not carried over, it need not exist on this one). */
export function rescoreConfig(config: Partial<RunConfig>, judge: JudgeChoice): Partial<RunConfig> {
  const { judge: _model, ...models } = config.models ?? {};
  return {
    ...config,
    judge: true,
    providers: { ...(config.providers ?? {}), judge: judge.provider },
    ...(judge.model || Object.keys(models).length ? { models: { ...models, ...(judge.model ? { judge: judge.model } : {}) } } : {}),
  };
}

/** The faithful rule at a threshold: only a statement Lean accepted can be faithful. */
export function faithfulAt(
  grade: number,
  threshold: number,
  statement: { compiled: boolean; checked: boolean; refused: boolean },
): boolean {
  return statement.compiled && statement.checked && !statement.refused && grade >= threshold;
}

/** What a rejudge unit is started with: a run's input (its informal statement, the cell's
 * configuration, the gold when the equivalence check runs again) and where its source is. */
export interface RejudgeInput {
  statement: string;
  library: string;
  config: RunConfig;
  /** The rescore sweep (its row holds the rubric). */
  sweepId: string;
  /** The source unit's workflow ID: the record judged again. */
  source: string;
  threshold: number;
  equivalence: boolean;
  goldStatement?: string;
  leanTaskQueue?: string;
  llm?: LlmCallPolicy;
  sample?: number;
}

/** A sweep run's outcome (common/sweep.ts's SweepOutcome; that module imports this one). */
type UnitOutcome = Outcome | 'failed' | 'budget-exhausted' | 'missing';

/** A source record as a rejudge unit reads it (fields of its SweepRunRecord): what the judge
 * needs and what it carries. */
export interface SourceRecord {
  workflowId: string;
  outcome: UnitOutcome;
  compiled: boolean;
  checked: boolean;
  formalStatement: string;
  judgeGrade: number | null;
  faithful: boolean | null;
  equivalent: boolean | null;
  refusal?: string;
  error?: string;
}

/** Why a unit's source is carried over without judging, or null when it is judged again. */
export function carriedReason(source: SourceRecord | null): string | null {
  if (!source) return 'the source sweep has no record of this unit';
  if (source.outcome === 'failed') return `the source run failed${source.error ? `: ${source.error}` : ''}`;
  if (source.outcome === 'missing') return "the source's predictions file had no statement for this unit";
  if (source.judgeGrade === null) return 'the source run was not judged';
  return null;
}

/** What a rejudge unit says about its source, beside its own verdict. */
export interface RescoreNote {
  /** The source unit's workflow ID. */
  source: string;
  sourceOutcome: UnitOutcome | null;
  sourceJudgeGrade: number | null;
  sourceFaithful: boolean | null;
  /** Set when the judge did not run: why (the source's outcome is carried). */
  carried?: string;
}

/** A rejudge unit's result: a run's result (its outcome the source's when carried, so possibly
 * `failed`), with the note on its source. */
export type RejudgeResult = Omit<FormalizeResult, 'outcome'> & { outcome: UnitOutcome; rescore: RescoreNote };

export function isRejudgeResult(result: unknown): result is RejudgeResult {
  return Boolean(result && typeof result === 'object' && 'rescore' in result && (result as RejudgeResult).rescore);
}

/** The activity a rejudge unit reads its source with (main task queue). */
export interface RescoreActivities {
  rescoreSource(input: { sweepId: string; source: string }): Promise<{ record: SourceRecord | null; rubric?: string }>;
}

/** The rejudge unit of a rescore sweep's (configuration, item, sample): its input. */
export function rejudgeInput(
  rescore: SweepRescore,
  unit: {
    sweepId: string;
    cell: string;
    itemId: string;
    sample: number;
    statement: string;
    library: string;
    config: RunConfig;
    goldStatement?: string;
    leanTaskQueue?: string;
    llm?: LlmCallPolicy;
  },
): RejudgeInput {
  return {
    statement: unit.statement,
    library: unit.library,
    config: unit.config,
    sweepId: unit.sweepId,
    source: `${rescore.of}/${unit.cell}/${unit.itemId}/${unit.sample}`,
    threshold: rescore.threshold,
    equivalence: rescore.equivalence,
    ...(rescore.equivalence && unit.goldStatement ? { goldStatement: unit.goldStatement } : {}),
    ...(unit.leanTaskQueue ? { leanTaskQueue: unit.leanTaskQueue } : {}),
    ...(unit.llm ? { llm: unit.llm } : {}),
    ...(unit.sample ? { sample: unit.sample } : {}),
  };
}
