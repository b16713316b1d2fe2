// The LLM stages as the activity factory calls them (decompose, formalize, repair, judge): build
// the prompt, ask, parse.
import type { SubQuery } from '../../common/retrieval-types';
import type { FormalizeStageInput, JudgeInput, JudgeVerdict, RepairStageInput } from '../../common/run-types';
import type { LlmClient } from './client';
import { buildDecomposeMessages, DECOMPOSE_SCHEMA_NAME, DecomposeReply, toSubQueries } from './decompose-prompt';
import { buildFormalizeMessages, extractLeanStatement, leanStatementGrammar } from './formalize-prompt';
import { buildJudgeMessages, enforceVerdict, JUDGE_SCHEMA_NAME, JudgeReply } from './judge-prompt';
import { askParsed, askStructured } from './ask-parsed';

export async function decomposeStatement(llm: LlmClient, statement: string, signal?: AbortSignal): Promise<SubQuery[]> {
  const reply = await askStructured(llm, 'decomposer', buildDecomposeMessages(statement), DecomposeReply, DECOMPOSE_SCHEMA_NAME, {
    signal,
  });
  return toSubQueries(reply);
}

/** The formalize stage: a first Lean statement from the informal one, the premises and examples.
 * The formalizer answers in free text; a reply without a theorem is re-asked like bad JSON. */
export async function formalizeStatement(llm: LlmClient, input: FormalizeStageInput, signal?: AbortSignal): Promise<string> {
  return askParsed(llm, 'formalizer', buildFormalizeMessages(input), extractLeanStatement, { signal, grammar: leanStatementGrammar });
}

/** The repair stage: the formalizer again, shown its previous attempt and what Lean said of it. */
export async function repairStatement(llm: LlmClient, input: RepairStageInput, signal?: AbortSignal): Promise<string> {
  return formalizeStatement(llm, input, signal);
}

/**
 * The judge: grades how faithfully the Lean statement says what the informal one says. Never
 * faithful unless Lean accepted it: a statement Lean rejected is capped (enforceVerdict); one the
 * statement screen refused before Lean is graded as not compiled; one Lean never checked (no
 * REPL configured) is graded on its meaning alone. The last two say so in the explanation.
 */
export async function judgeStatement(
  llm: LlmClient,
  input: JudgeInput,
  signal?: AbortSignal,
  opts: { rubric?: string } = {},
): Promise<JudgeVerdict> {
  const ask = async (asked: JudgeInput): Promise<JudgeVerdict> => {
    const reply = await askStructured(llm, 'judge', buildJudgeMessages(asked, opts.rubric), JudgeReply, JUDGE_SCHEMA_NAME, { signal });
    return enforceVerdict(reply, asked.compiled);
  };
  if (input.refused !== undefined) {
    const { refused, ...rest } = input;
    const verdict = await ask({ ...rest, compiled: false });
    return {
      ...verdict,
      faithful: false,
      explanation: `${verdict.explanation} (Refused by the statement screen before Lean, so it cannot count as faithful: ${refused})`,
    };
  }
  if (input.checked === false) {
    const verdict = await ask({ ...input, compiled: true });
    return {
      ...verdict,
      faithful: false,
      explanation: `${verdict.explanation} (Not compiled: no Lean REPL is configured, so the statement cannot count as faithful.)`,
    };
  }
  return ask(input);
}
