// Judge: grade how faithfully a Lean statement says what the informal statement says, on the
// 0-10 rubric of the tool-augmented-agents paper, with the faithful rule applied in code.
import { z } from 'zod';
import type { JudgeInput, JudgeVerdict } from '../../common/run-types';
import type { ChatMessage } from './client';

export const JUDGE_SCHEMA_NAME = 'judge_verdict';

/** Grades at or above this count as faithful (when the statement compiled). */
export const FAITHFUL_GRADE = 9;
/** The highest grade a statement that did not compile can get. */
export const NOT_COMPILED_MAX_GRADE = 3;

export const JudgeReply = z.object({
  grade: z.number().int().min(0).max(10),
  faithful: z.boolean(),
  explanation: z.string(),
});
export type JudgeReply = z.infer<typeof JudgeReply>;

const INSTRUCTIONS = `You are a careful reviewer who knows mathematics, Lean 4 and Mathlib.
You check translations, not proofs: given an informal mathematical statement, a Lean 4 snippet
meant to state it, and whether Lean accepted the snippet, decide whether the Lean statement
claims the same thing as the informal one.

How to compare:
- Look at the main theorem's statement; the proof part (including \`by sorry\`) does not matter.
- Check the quantifiers (for all / there exists), the logical shape (implication, iff, and, or)
  and that every key hypothesis is present, neither dropped nor added.
- Check the objects and where they live: ℕ, ℤ, ℝ, ℂ, ZMod n, groups, rings, matrices, spaces.
- Harmless encoding choices are fine as long as the meaning is kept.
- Helper definitions are acceptable when they honestly encode a notion. A definition that is an
  empty stand-in for a real concept (\`def P := True\`, \`:= 0\`, \`:= none\`, ...) that the
  statement leans on to look right makes the translation unfaithful.
- If Lean did not accept the snippet, it is not faithful and its grade is at most 3.

Grades (integers 0 to 10):
- 0: the Lean statement has nothing to do with the informal one.
- 1-3: Lean did not accept it, or the statement is plainly wrong.
- 4-6: it compiles but says something materially different: a key hypothesis is missing, the
  domain is wrong, or it is only roughly about the same thing.
- 7-8: it compiles and mostly matches, with a noticeable difference (for example a claim that
  is made stronger or weaker in a way that matters).
- 9: it compiles and matches except for a very small detail.
- 10: it compiles and means exactly the same.

"faithful" is true only when Lean accepted the snippet and the grade is 9 or 10.

Reply with a JSON object {"grade": <0-10>, "faithful": <true|false>, "explanation": "<a few
sentences comparing the two statements>"} and nothing else.`;

/** The service's rubric: the judge's instructions unless a calibration run replaces them. */
export const DEFAULT_JUDGE_RUBRIC = INSTRUCTIONS;

/** The shape of the reply, said after a rubric a user supplied (a rescore's rubric file says how
 * to grade; this says how to answer, whatever the file says). */
export const JUDGE_REPLY_FORMAT =
  'Reply with a JSON object {"grade": <integer 0-10>, "faithful": <true|false>, "explanation": "<a few sentences comparing the two statements>"} and nothing else.';

/** A user's rubric as the judge's instructions: its text, then the reply's shape. */
export function rubricInstructions(rubric: string): string {
  return `${rubric.trim()}\n\n${JUDGE_REPLY_FORMAT}`;
}

export function buildJudgeMessages(input: JudgeInput, rubric: string = INSTRUCTIONS): ChatMessage[] {
  const user = [
    'Informal statement:',
    input.statement.trim(),
    '',
    'Lean 4 code:',
    '```lean',
    input.formalStatement.trim(),
    '```',
    '',
    `Accepted by Lean: ${input.compiled ? 'yes' : 'no'}`,
  ].join('\n');
  return [
    { role: 'system', content: rubric },
    { role: 'user', content: user },
  ];
}

/**
 * The rubric's hard rules, applied whatever the model said: a statement that did not compile
 * gets at most 3, and faithful means compiled with a grade of at least 9.
 */
export function enforceVerdict(reply: JudgeReply, compiled: boolean): JudgeVerdict {
  const grade = compiled ? reply.grade : Math.min(reply.grade, NOT_COMPILED_MAX_GRADE);
  return {
    grade,
    faithful: compiled && grade >= FAITHFUL_GRADE,
    explanation: reply.explanation.trim(),
  };
}
