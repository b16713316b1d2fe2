// One LLM step of the agent: rebuild the messages (system prompt and first user message from
// the configuration, then the transcript the workflow kept), ask the model with the offered
// tools, and check the tool calls it made.
import type { AgentStepInput, AgentStepOutput, AgentTurn } from '../../common/agent-types';
import type { LlmClient, ToolChatMessage } from '../llm/client';
import { agentSystemPrompt, agentToolDefinitions, agentUserMessage } from './prompt';
import { declaresSuccess, MAX_ARGUMENTS_CHARS, parseToolCall } from './tool-calls';

/** Longest answer text kept in the transcript: a final answer needs only a status line, and the
 * transcript travels with every step. */
export const MAX_ANSWER_CHARS = 4000;

function toWire(turn: AgentTurn): ToolChatMessage {
  switch (turn.role) {
    case 'assistant':
      return {
        role: 'assistant',
        content: turn.content,
        ...(turn.toolCalls?.length
          ? {
              tool_calls: turn.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: turn.toolCallId, content: turn.content };
    case 'user':
      return { role: 'user', content: turn.content };
  }
}

/** The whole request's messages for a step. */
export function agentMessages(input: AgentStepInput): ToolChatMessage[] {
  return [
    { role: 'system', content: agentSystemPrompt(input.tools) },
    { role: 'user', content: agentUserMessage(input.statement, input.context) },
    ...input.transcript.map(toWire),
  ];
}

export async function runAgentStep(llm: LlmClient, input: AgentStepInput, signal?: AbortSignal): Promise<AgentStepOutput> {
  const reply = await llm.completeWithTools('agent', agentMessages(input), agentToolDefinitions(input.tools), { signal });
  const content = reply.content === null ? null : reply.content.slice(0, MAX_ANSWER_CHARS);
  const calls = reply.toolCalls.map((call) => parseToolCall(call, input.tools));
  return {
    // An over-long call was refused above; only its start is kept in the transcript.
    reply: {
      role: 'assistant',
      content,
      ...(reply.toolCalls.length
        ? { toolCalls: reply.toolCalls.map((c) => ({ ...c, arguments: c.arguments.slice(0, MAX_ARGUMENTS_CHARS) })) }
        : {}),
    },
    calls,
    declaresSuccess: calls.length === 0 && declaresSuccess(content),
    usage: reply.usage,
  };
}
