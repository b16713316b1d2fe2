// Decompose: one statement becomes several single-concept sub-queries, so that retrieval can
// look each concept up on its own instead of squeezing the whole sentence into one query.
import { z } from 'zod';
import type { SubQuery } from '../../common/retrieval-types';
import type { ChatMessage } from './client';

export const DECOMPOSE_SCHEMA_NAME = 'decomposition';

export const DecomposeReply = z.object({
  subqueries: z
    .array(
      z.object({
        phrase: z.string().min(1),
        formal: z.string().min(1),
      }),
    )
    .min(1),
});
export type DecomposeReply = z.infer<typeof DecomposeReply>;

const INSTRUCTIONS = `You prepare mathematical statements for formalization in Lean 4 with Mathlib.
Break the statement you are given into atomic sub-queries. Each sub-query is about exactly one
mathematical concept the formal statement will depend on: a type or structure, a predicate, an
operation, a relation, or a notion such as divisibility or a limit.

For every sub-query give:
- "phrase": a short informal phrase naming that one concept as it occurs in the statement
  (for example "p is a prime number");
- "formal": your best guess at how Lean 4 / Mathlib writes it (for example "Nat.Prime p"),
  using real Mathlib names where you know them.

Use as many sub-queries as the statement has concepts: a simple statement may need one or two,
a dense one may need eight or more. Do not merge two concepts into one sub-query, do not list
the same concept twice, and skip pure logical glue unless it is itself a library notion.

Reply with a JSON object {"subqueries": [{"phrase": ..., "formal": ...}, ...]} and nothing else.`;

export function buildDecomposeMessages(statement: string): ChatMessage[] {
  return [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: `Statement:\n${statement.trim()}` },
  ];
}

/** Trims the parsed reply and drops repeats, keeping the model's order. */
export function toSubQueries(reply: DecomposeReply): SubQuery[] {
  const seen = new Set<string>();
  const out: SubQuery[] = [];
  for (const q of reply.subqueries) {
    const sub = { phrase: q.phrase.trim(), formal: q.formal.trim() };
    const key = `${sub.phrase}\u0000${sub.formal}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(sub);
  }
  return out;
}
