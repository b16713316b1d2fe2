// What the Temporal UI shows about a run: a readable workflow ID, the summary and details given
// at start (user metadata), and the current details the workflow keeps up to date. Pure, so the
// workflow, the API and the CLI can all use it.
import { describeConfig, statementPreview } from './run-config';
import type { RunConfig } from './run-config-schema';
import type { Outcome, Stage } from './run-types';
import type { RefusedBy } from './lean-types';

/** The list view of the Temporal UI shows only the workflow ID of a run by default; a few words
 * of the statement in it tell runs apart at a glance. Lower-case ASCII letters, digits and
 * hyphens, at most `maxChars`. */
export function statementSlug(statement: string, maxChars = 40): string {
  const words = statement
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let slug = '';
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > maxChars) break;
    slug = next;
  }
  return slug || words[0]?.slice(0, maxChars) || 'statement';
}

/** `formalize-<slug>-<12 hex>`: 48 random bits keep ad-hoc IDs apart. */
export function adHocRunId(statement: string, randomHex: string): string {
  return `formalize-${statementSlug(statement)}-${randomHex.slice(0, 12)}`;
}

/** The run's summary (one line, the UI limits it to 200 bytes). */
export function runSummary(statement: string): string {
  let summary = statementPreview(statement, 24).replace(/\s+/g, ' ');
  const bytes = (text: string): number => new TextEncoder().encode(text).length;
  while (bytes(summary) > 190) summary = summary.slice(0, -2);
  return summary;
}

/** The configuration in words, e.g. "DRIFT retrieval (decomposed), 3 examples, up to 3 repair
 * rounds, judged". */
export function configInWords(config: RunConfig): string {
  if (config.mode === 'agent') {
    const context = config.driftContext ? `DRIFT context (${config.retrieval})` : 'no DRIFT context';
    return [
      `agent with ${config.tools.join(', ')}`,
      `at most ${config.maxSteps} steps`,
      context,
      config.judge ? 'judged' : 'not judged',
    ].join(', ');
  }
  const retrieval = {
    drift: `DRIFT retrieval (${config.decompose ? 'decomposed' : 'not decomposed'})`,
    monolithic: `monolithic retrieval, top ${config.topK}`,
    oracle: 'oracle premises',
    none: 'no retrieval',
  }[config.retrieval];
  const parts = [
    retrieval,
    config.illustrate && config.examples > 0 ? `${config.examples} examples` : 'no examples',
    config.repairRounds > 0 ? `up to ${config.repairRounds} repair rounds` : 'no repair',
    config.judge ? 'judged' : 'not judged',
  ];
  return parts.join(', ');
}

/** Markdown for the run's static details (shown under "User Metadata"). */
export function runStaticDetails(input: { library: string; config: RunConfig; sweep?: string }): string {
  const lines = [`**Library** ${input.library}`, `**Configuration** \`${describeConfig(input.config)}\`: ${configInWords(input.config)}`];
  if (input.sweep) lines.push(`**Sweep** ${input.sweep}`);
  lines.push('The outcome and the index version are in the search attributes `DriftlineOutcome` and `DriftlineIndex` once the run ends.');
  return lines.join('\n\n');
}

export interface RunState {
  library: string;
  config: RunConfig;
  stage: Stage;
  /** Repair round in progress (0 before any repair). */
  round: number;
  indexVersion?: string;
  outcome?: Outcome;
  /** Outcome `refused`: the reason (the screen's, unless `refusedBy`). */
  refusal?: string;
  /** Outcome `refused` not by the screen: a forged REPL reply or a parse disagreement. */
  refusedBy?: RefusedBy;
  /** The verdict on the last attempt (Lean's, or the screen's refusal), once known. */
  compile?: string;
  /** Who gave `compile`: Lean (the default), or the statement screen before Lean. */
  compileBy?: 'lean' | 'screen';
  grade?: number;
  /** Agent runs: the LLM step in progress and the last tool called. */
  step?: number;
  lastTool?: string | null;
}

const OUTCOME_WORDS: Record<Outcome, string> = {
  faithful: 'faithful (compiles, judged faithful)',
  unfaithful: 'unfaithful (compiles, judged unfaithful)',
  compiled: 'compiled (not judged)',
  'not-compiled': 'NOT COMPILED (Lean rejected the last attempt)',
  refused: 'REFUSED by the screen before Lean (Lean never saw the last attempt)',
  unchecked: 'unchecked (no Lean configured)',
  'budget-exhausted': 'BUDGET EXHAUSTED (the agent ran out of steps, tokens or time)',
};

/** A refusal that was not the screen's: a hole found (decision 0017). */
const REFUSED_BY_WORDS: Record<RefusedBy, string> = {
  tampering: "REFUSED FOR TAMPERING (the Lean REPL's reply was not the one reply to the check; never compiled)",
  disagreement: 'REFUSED: Lean could not parse what the screen accepted (a screen/Lean disagreement; never compiled)',
};

/** Markdown for the run's current details, updated as it goes. */
export function runCurrentDetails(state: RunState): string {
  const lines = [
    state.outcome
      ? `**Outcome** ${state.outcome === 'refused' && state.refusedBy ? REFUSED_BY_WORDS[state.refusedBy] : OUTCOME_WORDS[state.outcome]}${state.outcome === 'refused' && state.refusal ? `: ${state.refusal}` : ''}`
      : state.step
        ? `**Stage** ${state.stage} (step ${state.step}${state.lastTool ? `, last tool ${state.lastTool}` : ''})`
        : `**Stage** ${state.stage}${state.round > 0 ? ` (repair round ${state.round})` : ''}`,
    `**Library** ${state.library}`,
    `**Index version** ${state.indexVersion ?? (state.config.retrieval === 'none' ? 'none (retrieval off)' : 'not opened yet')}`,
    `**Configuration** \`${describeConfig(state.config)}\`: ${configInWords(state.config)}`,
  ];
  if (state.compile) lines.push(`${state.compileBy === 'screen' ? '**Screen** (Lean never saw it)' : '**Lean**'} ${state.compile}`);
  if (state.grade !== undefined) lines.push(`**Judge** grade ${state.grade}/10`);
  return lines.join('\n\n');
}
