// Formalize: instructions, then the retrieved premises, then the chosen examples, then the
// statement; on a repair round, the previous attempt and what Lean said about it.
import type { LeanMessage } from '../../common/lean-types';
import type { Example, Premise } from '../../common/retrieval-types';
import type { FormalizeStageInput, RepairContext } from '../../common/run-types';
import type { ChatMessage } from './client';

export { extractLeanStatement } from './extract-lean';

/** Source text beyond this many characters is cut: premises are there for names and shapes. */
export const MAX_SOURCE_CHARS = 1500;

const INSTRUCTIONS = `You translate informal mathematics into Lean 4 statements that use Mathlib.
You state theorems; you never prove them.

Rules for your answer:
- Give exactly ONE Lean 4 theorem (\`theorem\`) that says what the informal statement says, in a
  single \`\`\`lean code block. Before it, in the same block, put the definitions the statement
  needs, if any, and nothing else.
- Its proof must be exactly \`:= by sorry\`. Write no tactics and no proof terms.
- Do not write \`import\` lines: the checker puts the library header in front of your code.
  \`open\` lines before the theorem are fine when you need them.
- Use the library's own names wherever the library has the notion. Define something yourself
  only when it does not: a \`def\`, \`abbrev\`, \`structure\`, \`inductive\` or \`instance\` with
  a plain body. No attributes, macros, syntax, axioms, \`unsafe\`/\`partial\` definitions or
  commands such as \`#eval\`: the checker refuses them.
- When the statement asks to find or determine something ("find all n such that …", "what is the
  least …"), give your answer as an \`abbrev\` (for example
  \`abbrev answer : Set ℕ := {n | n = 2 ∨ n = 3}\`) and let the theorem say the answer is right
  (\`{n : ℕ | …} = answer\`, or \`IsLeast {x | …} answer\`).
- Never stand in for a concept with a placeholder such as \`True\`, \`0\` or a definition that
  says nothing.
- Keep every hypothesis and quantifier of the informal statement, with the right types
  (ℕ, ℤ, ℚ, ℝ, ℂ, ZMod n, a group, a topological space, ...); add only the assumptions the
  statement takes for granted (such as the type classes its objects need).

The premises below are real library declarations that are likely relevant; the examples show
how such declarations are used in real theorems. Use them where they fit; ignore the rest.`;

function premiseBlock(p: Premise, i: number): string {
  const lines = [`${i + 1}. ${p.name} (${p.kind})`, '```lean', p.declaration.trim(), '```'];
  if (p.source && p.source.trim() !== p.declaration.trim()) {
    const source = p.source.trim();
    const shown = source.length > MAX_SOURCE_CHARS ? `${source.slice(0, MAX_SOURCE_CHARS)}\n-- (source cut)` : source;
    lines.push('Source:', '```lean', shown, '```');
  }
  return lines.join('\n');
}

function exampleBlock(e: Example, i: number): string {
  const informal = e.informal?.trim() ? `Informal: ${e.informal.trim()}` : `Informal: (not available; theorem ${e.name})`;
  return [`Example ${i + 1}.`, informal, 'Formal:', '```lean', e.formal.trim(), '```'].join('\n');
}

/** One compiler message as `line:col severity: text`. */
export function formatLeanMessage(m: LeanMessage): string {
  return `${m.line}:${m.column} ${m.severity}: ${m.text.trim()}`;
}

/** The `sorry` warning is expected for a statement and only distracts the repair. */
function isSorryWarning(m: LeanMessage): boolean {
  return m.severity !== 'error' && /declaration uses 'sorry'/.test(m.text);
}

function repairRequest(repair: RepairContext): string {
  const messages = repair.messages.filter((m) => !isSorryWarning(m));
  // A refusal by the statement screen (compile status `refused`) is worded as such: Lean never saw it.
  const refused = messages.some((m) => m.severity === 'error' && /^refused before Lean:/i.test(m.text));
  const parts = [
    refused
      ? 'That statement was refused before Lean by the statement screen (it lets through the definitions a statement needs, then one theorem ending `:= by sorry`; no commands, attributes, macros or proofs). Its message (line:column severity: text):'
      : 'Lean did not accept that statement. Its messages (line:column severity: text):',
    messages.length ? messages.map(formatLeanMessage).join('\n') : '(no messages were reported)',
  ];
  const suggestions = Object.entries(repair.suggestions ?? {}).filter(([, names]) => names.length > 0);
  if (suggestions.length) {
    parts.push(
      '',
      'Unknown identifiers, with real library names close to them:',
      ...suggestions.map(([unknown, names]) => `- ${unknown}: ${names.join(', ')}`),
    );
  }
  parts.push(
    '',
    'Fix the statement so that it compiles while keeping the meaning of the informal statement.',
    'Answer with the corrected definitions (if it needs any) and theorem in one ```lean block, ending in `:= by sorry`.',
  );
  return parts.join('\n');
}

/** Characters the grammar's fixed parts take: the fences, `theorem ` and `:= by sorry`. */
const GRAMMAR_FRAME_CHARS = 40;
/** A statement longer than this is not a statement. */
const GRAMMAR_MAX_STATEMENT = 1500;
/** Definitions the grammar admits before the theorem, lines each, and characters a line. */
const GRAMMAR_MAX_DEFINITIONS = 3;
const GRAMMAR_MAX_DEFINITION_LINES = 8;
const GRAMMAR_DEFINITION_LINE = 100;
/** The words a definition may start with in the grammar, and `open` (which the prompt allows);
 * the screen admits more, and still decides what reaches Lean. */
const GRAMMAR_DEFINITION_KEYWORDS = ['noncomputable def', 'def', 'abbrev', 'structure', 'class', 'inductive', 'instance', 'open'];
/** Most characters of one definition line with its keyword and newline, and of a continuation
 * line (two spaces or `| `, the text, the newline). */
const GRAMMAR_HEAD_CHARS = Math.max(...GRAMMAR_DEFINITION_KEYWORDS.map((k) => k.length)) + 1 + GRAMMAR_DEFINITION_LINE + 1;
const GRAMMAR_CONTINUATION_CHARS = 2 + GRAMMAR_DEFINITION_LINE + 1;

/**
 * The answer's shape as a GBNF grammar, for providers that decode under one (a small local model
 * otherwise writes on until max tokens): one ```lean block holding, first, up to three
 * definitions (a `def`/`abbrev`/`noncomputable def`/`structure`/`class`/`inductive`/`instance`
 * line or an `open` line, then lines indented by two spaces or starting `| `, then a blank line
 * at most), then one `theorem` whose proof is `:= by sorry`; as a whole short enough to end
 * within `maxTokens` (a token is at least one character). Definitions get at most half the room:
 * as many as it holds with one line each (none below about 280 tokens), their later lines from
 * what is left. The grammar only bounds the shape: the screen decides afterwards what reaches
 * Lean.
 */
export function leanStatementGrammar(maxTokens: number): string {
  const room = Math.max(1, maxTokens - GRAMMAR_FRAME_CHARS);
  // As many definitions (three at most) as half the room holds with one line each (and a blank
  // line after); what is left of each one's share goes to its later lines.
  const half = Math.floor(room / 2);
  const definitions = Math.min(GRAMMAR_MAX_DEFINITIONS, Math.floor(half / (GRAMMAR_HEAD_CHARS + 1)));
  const withDefinitions = definitions > 0;
  const continuations = withDefinitions
    ? Math.min(
        GRAMMAR_MAX_DEFINITION_LINES - 1,
        Math.floor((Math.floor(half / definitions) - GRAMMAR_HEAD_CHARS - 1) / GRAMMAR_CONTINUATION_CHARS),
      )
    : 0;
  const definitionsChars = definitions * (GRAMMAR_HEAD_CHARS + continuations * GRAMMAR_CONTINUATION_CHARS + 1);
  const n = Math.max(1, Math.min(GRAMMAR_MAX_STATEMENT, room - definitionsChars));
  // No backquote anywhere: the block cannot be closed early. No `:=`-free rule needed: the cut
  // at the first top-level `:=` (extractLeanStatement) drops any proof the model starts.
  const line = `[^\`\\n]{1,${GRAMMAR_DEFINITION_LINE}}`;
  return [
    `root ::= "\`\`\`lean\\n" ${withDefinitions ? `definition{0,${definitions}} ` : ''}"theorem " statement " := by sorry\\n\`\`\`"`,
    ...(withDefinitions
      ? [
          `definition ::= keyword " " ${line} "\\n"${continuations > 0 ? ` continuation{0,${continuations}}` : ''} "\\n"?`,
          `keyword ::= ${GRAMMAR_DEFINITION_KEYWORDS.map((k) => `"${k}"`).join(' | ')}`,
          ...(continuations > 0 ? [`continuation ::= ("  " | "| ") ${line} "\\n"`] : []),
        ]
      : []),
    `statement ::= [^\`]{1,${n}}`,
  ].join('\n');
}

export function buildFormalizeMessages(input: FormalizeStageInput): ChatMessage[] {
  const sections: string[] = [];
  if (input.premises.length) {
    sections.push(`## Premises\n\n${input.premises.map(premiseBlock).join('\n\n')}`);
  }
  if (input.examples.length) {
    sections.push(`## Examples\n\n${input.examples.map(exampleBlock).join('\n\n')}`);
  }
  sections.push(`## Statement to formalize\n\n${input.statement.trim()}`);

  const messages: ChatMessage[] = [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: sections.join('\n\n') },
  ];
  if (input.repair) {
    // The previous attempt is shown as the model's own turn, so the fix reads as a follow-up.
    messages.push(
      { role: 'assistant', content: '```lean\n' + input.repair.statement.trim() + '\n```' },
      { role: 'user', content: repairRequest(input.repair) },
    );
  }
  return messages;
}
