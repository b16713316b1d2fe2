// The agent's prompt: one base text that never changes between configurations, one block per
// offered tool, and the tools' function definitions for the OpenAI tool-calling interface.
// Switching a tool off removes exactly its block and its definition, nothing else, so a
// factorial comparison measures the tools and not the wording. Pure.
import type { AgentStepInput } from '../../common/agent-types';
import type { Example, Premise } from '../../common/retrieval-types';
import type { AgentToolName } from '../../common/run-config-schema';
import { AGENT_TOOL_NAMES } from '../../common/run-config-schema';

export const AGENT_BASE_PROMPT = `You turn one informal mathematical statement into one Lean 4 theorem statement that Lean with Mathlib accepts. You state theorems; you never prove them.

What the Lean file must look like:
- It begins with \`import Mathlib\`.
- It holds exactly one theorem: the statement, with the meaning of the informal text, ending in \`:= by sorry\`. Before that \`:= by sorry\` there is no proof text of any kind (no \`by\`, \`simp\`, \`have\`, \`calc\`).
- It may open namespaces and declare variables, but it defines nothing: no new \`def\`, \`structure\`, \`axiom\` or \`constant\`, no stand-in for a concept Mathlib already has. Use Mathlib's own names.
- Choose the formulation that says exactly what the text says: keep every hypothesis, every quantifier and the right types (ℕ, ℤ, ℝ, a ring, a group, …). Prefer a characterisation through membership and quantifiers to a fragile definitional equality.

How to work:
- Act through the tools listed below, one call at a time, and read each result before the next call.
- You are done only when the file you wrote last says the right thing and, if you can run Lean, Lean accepted it. Then answer without calling a tool, with the JSON {"status": "success"}.
- An answer without a tool call ends the work, so do not answer before you are done.`;

/** One block per tool, in the order they are listed. */
export const AGENT_TOOL_BLOCKS: Record<AgentToolName, string> = {
  write_file: `write_file(code): replace the working Lean file with \`code\`, the whole file (import line, the definitions the statement needs if any, then the one theorem). Files that could run code are refused with the reason.`,
  run_lean: `run_lean(): check the working Lean file with Lean and Mathlib; returns Lean's errors and warnings, or that it compiled. A warning that the theorem uses \`sorry\` is expected.`,
  inspect_name: `inspect_name(name): ask Lean about a name, e.g. \`Nat.Prime\`: whether it exists, its type and its definition or statement.`,
  resolve_name: `resolve_name(token, namespace_hints?): for a name Lean does not know (a typo, a wrong namespace, a name from an older Mathlib), the real names closest to it, each confirmed by Lean. \`namespace_hints\` lists namespaces to prefer.`,
  search_premises: `search_premises(query): search the library for definitions and lemmas relevant to \`query\` (words or a Lean expression); returns their full names and declarations.`,
  draft: `draft(statement): ask a specialised translation model for a Lean draft of \`statement\`. Use it as a starting point, correct it, or ignore it.`,
};

const TOOLS_HEADING = 'Tools you can call:';

/** The system prompt for a set of tools: the base text, then the blocks of the tools offered. */
export function agentSystemPrompt(tools: readonly AgentToolName[]): string {
  const offered = AGENT_TOOL_NAMES.filter((t) => tools.includes(t));
  return `${AGENT_BASE_PROMPT}\n\n${TOOLS_HEADING}\n${offered.map((t) => `- ${AGENT_TOOL_BLOCKS[t]}`).join('\n')}`;
}

/** JSON schema of each tool's arguments (also used to check the model's calls). */
export const AGENT_TOOL_PARAMETERS: Record<AgentToolName, { properties: Record<string, unknown>; required: string[] }> = {
  write_file: { properties: { code: { type: 'string', description: 'The whole Lean file.' } }, required: ['code'] },
  run_lean: { properties: {}, required: [] },
  inspect_name: { properties: { name: { type: 'string', description: 'A Lean name, e.g. Nat.Prime.' } }, required: ['name'] },
  resolve_name: {
    properties: {
      token: { type: 'string', description: 'The name Lean did not know.' },
      namespace_hints: { type: 'array', items: { type: 'string' }, description: 'Namespaces to prefer, e.g. ["Nat"].' },
    },
    required: ['token'],
  },
  search_premises: { properties: { query: { type: 'string', description: 'What to look for.' } }, required: ['query'] },
  draft: { properties: { statement: { type: 'string', description: 'The informal statement to translate.' } }, required: ['statement'] },
};

/** A one-line description per tool for the function definition (the block carries the rest). */
const TOOL_DESCRIPTIONS: Record<AgentToolName, string> = {
  write_file: 'Replace the working Lean file.',
  run_lean: 'Check the working Lean file with Lean; returns the compiler messages.',
  inspect_name: 'Type and definition of a Lean name.',
  resolve_name: 'Real Lean names closest to an unknown one.',
  search_premises: 'Search the library for relevant definitions and lemmas.',
  draft: 'A Lean draft from a specialised translation model.',
};

export interface ToolDefinition {
  type: 'function';
  function: { name: AgentToolName; description: string; parameters: Record<string, unknown> };
}

/** The `tools` field of the chat request for a set of tools, in a fixed order. */
export function agentToolDefinitions(tools: readonly AgentToolName[]): ToolDefinition[] {
  return AGENT_TOOL_NAMES.filter((t) => tools.includes(t)).map((name) => ({
    type: 'function',
    function: {
      name,
      description: TOOL_DESCRIPTIONS[name],
      parameters: {
        type: 'object',
        properties: AGENT_TOOL_PARAMETERS[name].properties,
        required: AGENT_TOOL_PARAMETERS[name].required,
        additionalProperties: false,
      },
    },
  }));
}

function premiseLines(premises: Premise[]): string {
  return premises.map((p) => `- ${p.name}: ${p.declaration}`).join('\n');
}

function exampleLines(examples: Example[]): string {
  return examples.map((e) => (e.informal ? `- ${e.informal}\n  ${e.formal}` : `- ${e.formal}`)).join('\n');
}

/** The first user message: the statement, and DRIFT context when the configuration adds it. */
export function agentUserMessage(statement: string, context?: AgentStepInput['context']): string {
  const parts = [`Statement to formalize:\n${statement.trim()}`];
  if (context?.premises.length) parts.push(`Library declarations that are likely relevant:\n${premiseLines(context.premises)}`);
  if (context?.examples.length) parts.push(`Theorems of the library that use them:\n${exampleLines(context.examples)}`);
  return parts.join('\n\n');
}
