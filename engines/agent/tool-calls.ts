// Checks the model's tool calls against the tools offered and their argument schemas. A call
// that does not check out is not an error of the run: it becomes a message back to the model
// saying what was wrong. Pure.
import type { AgentToolCall, ParsedToolCall } from '../../common/agent-types';
import type { AgentToolName } from '../../common/run-config-schema';
import { AGENT_TOOL_NAMES } from '../../common/run-config-schema';
import { AGENT_TOOL_PARAMETERS } from './prompt';

function isToolName(name: string): name is AgentToolName {
  return (AGENT_TOOL_NAMES as readonly string[]).includes(name);
}

function typeProblem(key: string, value: unknown, schema: { type?: string; items?: { type?: string } }): string | null {
  if (schema.type === 'string') return typeof value === 'string' && value.trim() !== '' ? null : `\`${key}\` must be a non-empty string`;
  if (schema.type === 'array') {
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? null : `\`${key}\` must be an array of strings`;
  }
  return null;
}

/** Longest arguments text accepted (a whole Lean file for one theorem is far shorter). Longer
 * calls are refused, which also keeps them from growing the transcript. */
export const MAX_ARGUMENTS_CHARS = 20_000;

export function parseToolCall(call: AgentToolCall, offered: readonly AgentToolName[]): ParsedToolCall {
  const fail = (error: string): ParsedToolCall => ({ id: call.id, tool: call.name, error });
  if (call.arguments.length > MAX_ARGUMENTS_CHARS) {
    return fail(`the arguments of \`${call.name}\` are ${call.arguments.length} characters long; the limit is ${MAX_ARGUMENTS_CHARS}`);
  }
  if (!isToolName(call.name) || !offered.includes(call.name)) {
    return fail(`there is no tool \`${call.name}\`; the tools are ${offered.map((t) => `\`${t}\``).join(', ')}`);
  }
  const schema = AGENT_TOOL_PARAMETERS[call.name];
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    return fail(`the arguments of \`${call.name}\` are not valid JSON: ${call.arguments.slice(0, 200)}`);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    return fail(`the arguments of \`${call.name}\` must be a JSON object`);
  const given = args as Record<string, unknown>;
  const known = Object.keys(schema.properties);
  const unknown = Object.keys(given).filter((k) => !known.includes(k));
  const expected = known.length
    ? `it takes ${known.map((k) => `\`${k}\`${schema.required.includes(k) ? '' : ' (optional)'}`).join(', ')}`
    : 'it takes no arguments';
  if (unknown.length) return fail(`\`${call.name}\` has no argument ${unknown.map((k) => `\`${k}\``).join(', ')}; ${expected}`);
  for (const key of schema.required) if (!(key in given)) return fail(`\`${call.name}\` needs \`${key}\`; ${expected}`);
  for (const [key, value] of Object.entries(given)) {
    const problem = typeProblem(key, value, schema.properties[key] as { type?: string });
    if (problem) return fail(`in \`${call.name}\`, ${problem}`);
  }
  return { id: call.id, tool: call.name, args: given };
}

/** The answer says `{"status": "success"}` (possibly inside other text or a code fence). */
export function declaresSuccess(content: string | null): boolean {
  return /"status"\s*:\s*"success"/i.test(content ?? '');
}
