// The three LLM stages as the activity factory calls them: build the prompt, ask, parse.
import type { FormalizeStageInput, JudgeInput, JudgeVerdict, SubQuery } from '../../common/types';
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

/** The formalizer answers in free text; a reply without a theorem is re-asked like bad JSON. */
export async function formalizeStatement(
  llm: LlmClient,
  input: FormalizeStageInput,
  signal?: AbortSignal,
): Promise<string> {
  return askParsed(llm, 'formalizer', buildFormalizeMessages(input), extractLeanStatement, { signal, grammar: leanStatementGrammar });
}

export async function judgeStatement(
  llm: LlmClient,
  input: JudgeInput,
  signal?: AbortSignal,
  opts: { rubric?: string } = {},
): Promise<JudgeVerdict> {
  const reply = await askStructured(llm, 'judge', buildJudgeMessages(input, opts.rubric), JudgeReply, JUDGE_SCHEMA_NAME, { signal });
  return enforceVerdict(reply, input.compiled);
}
