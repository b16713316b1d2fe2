// The Retrieve stage over a PremiseIndex: which premises the formalizer sees, per mode.
// Pure given the index, so every mode is tested without any server.
import type { Premise, RetrieveInput, RetrieveOutput, SubQuery } from '../../common/retrieval-types';
import type { Declaration } from './corpus';
import type { Hit, PremiseIndex } from './premise-index';
import { leaveOutNames } from './leave-out';

export function toPremise(decl: Declaration, extra: { subquery?: number; score?: number } = {}): Premise {
  const p: Premise = { name: decl.name, kind: decl.kind, declaration: decl.signature };
  if (decl.source !== undefined) p.source = decl.source;
  if (decl.module !== undefined) p.module = decl.module;
  if (extra.subquery !== undefined) p.subquery = extra.subquery;
  if (extra.score !== undefined) p.score = extra.score;
  return p;
}

/** What the run's trace says about how premises were searched. */
export function searchNote(index: PremiseIndex): string {
  // Wrappers (usage prior, analogy) append to the inner index's kind: `lexical + …`.
  if (index.kind === 'lexical' || index.kind.startsWith('lexical + ')) {
    const extra = index.kind.slice('lexical'.length).replace(/^ \+ /, '');
    return `retrieval: lexical (BM25) only, no embedder configured${extra ? `; ${extra}` : ''}`;
  }
  return `retrieval: ${index.kind}`;
}

/** The texts DRIFT searches with: each sub-query's phrase and predicted formal form, or the
 * whole statement when there are no sub-queries. The service and the evaluation both use it. */
export function subqueryTexts(statement: string, subqueries: readonly SubQuery[]): string[] {
  return subqueries.length > 0 ? subqueries.map((q) => `${q.phrase} ${q.formal}`) : [statement];
}

export async function retrievePremises(index: PremiseIndex, input: RetrieveInput): Promise<RetrieveOutput> {
  if (input.mode === 'none') return { premises: [], notes: ['retrieval: none (disabled by configuration)'] };
  const exclude = await leaveOutNames(index, input.exclude, input.leaveOut);
  const notes: string[] = [];
  if (input.leaveOut === 'file')
    notes.push(`leave-out: file (${exclude.length - new Set(input.exclude).size} theorems of the item's own file hidden)`);
  switch (input.mode) {
    case 'oracle': {
      const excluded = new Set(exclude);
      const premises: Premise[] = [];
      const missing: string[] = [];
      const seen = new Set<string>();
      for (const name of input.gold) {
        if (excluded.has(name) || seen.has(name)) continue;
        seen.add(name);
        const decl = await index.get(name);
        if (decl) premises.push(toPremise(decl));
        else missing.push(name);
      }
      notes.push(`retrieval: oracle (${premises.length} gold premises)`);
      if (missing.length > 0) notes.push(`oracle: not in library ${index.library}: ${missing.join(', ')}`);
      return { premises, notes };
    }

    case 'monolithic': {
      notes.push(searchNote(index));
      const hits = await index.searchPremises(input.statement, input.topK, { exclude });
      return { premises: hits.map((h) => toPremise(h.decl, { score: h.score })), notes };
    }

    case 'drift': {
      notes.push(searchNote(index));
      // Without sub-queries (decomposition off or empty), the statement is the only one.
      const queries = subqueryTexts(input.statement, input.subqueries);
      if (input.subqueries.length === 0) notes.push('drift: no sub-queries; the statement was the only query');
      const premises: Premise[] = [];
      const seen = new Set<string>();
      // Searched concurrently; kept in sub-query order, so the result does not depend on timing.
      const tops = await Promise.all(queries.map(async (q) => (await index.searchPremises(q, 1, { exclude }))[0]));
      tops.forEach((top: Hit | undefined, i) => {
        // De-duplicated; a premise keeps the first sub-query that found it.
        if (!top || seen.has(top.decl.name)) return;
        seen.add(top.decl.name);
        premises.push(toPremise(top.decl, { subquery: i, score: top.score }));
      });
      return { premises, notes };
    }

    default: {
      const mode: never = input.mode;
      throw new Error(`unknown retrieval mode ${String(mode)}`);
    }
  }
}
