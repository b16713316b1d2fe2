// Keeps the agent's transcript, which travels with every LLM step (and so into the workflow's
// history once per step), under a size budget. When it grows past the budget, the oldest tool
// results are replaced by their one-line summaries and the oldest long tool-call arguments (an
// earlier version of the file) by a note, oldest first, never touching the latest turns. With
// typical runs nothing is cut; with T_max = 50 steps of maximal outputs the history stays a few
// megabytes. Pure.
import type { AgentTurn } from '../common/agent-types';
import { summarize } from './agent-tool-output';

/** Characters of transcript kept before the oldest turns are shortened. */
export const TRANSCRIPT_BUDGET_CHARS = 32_000;
/** The latest turns are always kept whole: the model needs them to act. */
export const KEEP_RECENT_TURNS = 4;

function size(turn: AgentTurn): number {
  if (turn.role === 'assistant')
    return (turn.content?.length ?? 0) + (turn.toolCalls ?? []).reduce((n, c) => n + c.arguments.length + c.name.length, 0);
  return turn.content.length;
}

function shorten(turn: AgentTurn): AgentTurn {
  switch (turn.role) {
    case 'tool':
      return turn.content.length > 400 ? { ...turn, content: `(shortened) ${summarize(turn.content)}` } : turn;
    case 'assistant':
      return {
        ...turn,
        ...(turn.content && turn.content.length > 400 ? { content: `(shortened) ${summarize(turn.content)}` } : {}),
        ...(turn.toolCalls
          ? {
              toolCalls: turn.toolCalls.map((c) =>
                c.arguments.length > 400
                  ? { ...c, arguments: JSON.stringify({ note: `earlier arguments of ${c.arguments.length} characters, not repeated` }) }
                  : c,
              ),
            }
          : {}),
      };
    case 'user':
      return turn;
  }
}

/** The transcript, shortened from the oldest turn on until it fits the budget. */
export function boundTranscript(turns: AgentTurn[], budget = TRANSCRIPT_BUDGET_CHARS): AgentTurn[] {
  let total = turns.reduce((n, t) => n + size(t), 0);
  if (total <= budget) return turns;
  const out = [...turns];
  for (let i = 0; i < out.length - KEEP_RECENT_TURNS && total > budget; i++) {
    const before = size(out[i]!);
    out[i] = shorten(out[i]!);
    total -= before - size(out[i]!);
  }
  return out;
}
