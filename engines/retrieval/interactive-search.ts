// Search for a person: what they typed, ranked by name first. A person searching `near-litter`
// wants `ConNF.IsNearLitter`, not `ConNF.Params`, which the formalization's retrieval ranks high
// because most items depend on it (its usage prior). So interactive search (`driftline index
// search`, GET /v1/libraries/:name/search, MCP `search_premises`) takes a pool from the store's own
// ranking (BM25F over names and statements, fused with the dense side where the version has it;
// no usage prior, no analogy) and orders it by how closely each name matches the query, the
// store's order breaking ties: the statement's words decide only among equal name matches.
// The formalization's retrieval (retrieve-premises.ts, the wrapped index) is not touched.
import { isTheorem } from './corpus';
import type { Hit, PremiseIndex } from './premise-index';
import { splitWords, stem } from './lean-tokenize';

/** How many of the store's best hits are re-ordered (at least k). */
export const INTERACTIVE_POOL = 100;

/** How close a name is to the query, best first. */
export const NAME_MATCH = {
  /** The whole name, ignoring case: `conNF.isNearLitter`. */
  exact: 0,
  /** The last component, or a dotted suffix, ignoring case and separators: `NearLitter`, `near-litter`,
   * `is_near_litter` for `ConNF.IsNearLitter`. */
  last: 1,
  /** The query's words in a row inside the last component: `near-litter` in `IsNearLitter`. */
  inLast: 2,
  /** The query's words in a row inside another component: `ConNF.NearLitterAction.orbitSet`. */
  inOther: 3,
  /** Every word of the query somewhere in the name. */
  allWords: 4,
  /** No name match: the store's ranking on the statement's words decides. */
  none: 5,
} as const;

/** Words of a query or a name component, lower case, plurals stripped: `near-litters`,
 * `NearLitter` and `near_litter` all give near, litter. */
export function searchWords(text: string): string[] {
  return (text.match(/[\p{L}\p{N}_'!?₀-₉]+/gu) ?? []).flatMap(splitWords).map((w) => stem(w.toLowerCase()));
}

function containsRun(words: readonly string[], run: readonly string[]): boolean {
  if (run.length === 0 || run.length > words.length) return false;
  for (let i = 0; i + run.length <= words.length; i++) if (run.every((w, j) => words[i + j] === w)) return true;
  return false;
}

/** The name-match tier of `name` for `query` (NAME_MATCH), and how many words of the matching
 * component the query leaves over (fewer is closer: `IsNearLitter` before `IsNearLitterMap`). */
export function nameMatch(query: string, name: string): { tier: number; extra: number } {
  const q = query.trim().toLowerCase();
  const qWords = searchWords(query);
  if (q === '' || qWords.length === 0) return { tier: NAME_MATCH.none, extra: 0 };
  if (name.toLowerCase() === q) return { tier: NAME_MATCH.exact, extra: 0 };
  const components = name.split('.').filter(Boolean);
  const compWords = components.map(searchWords);
  const last = compWords.at(-1) ?? [];
  const compact = qWords.join('');
  // A dotted query names a suffix (`NearLitter.toProd`); otherwise the last component.
  const qParts = q.split('.').filter(Boolean);
  if (qParts.length > 1) {
    const suffix = compWords.slice(-qParts.length).map((ws) => ws.join(''));
    if (suffix.length === qParts.length && suffix.every((s, i) => s === searchWords(qParts[i]!).join('')))
      return { tier: NAME_MATCH.last, extra: 0 };
  } else if (last.join('') === compact) return { tier: NAME_MATCH.last, extra: 0 };
  if (containsRun(last, qWords)) return { tier: NAME_MATCH.inLast, extra: last.length - qWords.length };
  // One word typed in lower case (`nearlitter`) meets the component's words run together.
  if (qWords.length === 1 && compact.length >= 3 && last.join('').includes(compact)) return { tier: NAME_MATCH.inLast, extra: last.length };
  const others = compWords.slice(0, -1).filter((ws) => containsRun(ws, qWords));
  if (others.length > 0) return { tier: NAME_MATCH.inOther, extra: Math.min(...others.map((ws) => ws.length - qWords.length)) };
  const all = new Set(compWords.flat());
  if (qWords.every((w) => all.has(w))) return { tier: NAME_MATCH.allWords, extra: all.size - qWords.length };
  return { tier: NAME_MATCH.none, extra: 0 };
}

/** Orders hits for a person: by name match, then by the order given (the store's score).
 * Stable, so equal matches keep the store's order. */
export function rankForPerson(query: string, hits: readonly Hit[]): Hit[] {
  return hits
    .map((hit, i) => ({ hit, i, m: nameMatch(query, hit.decl.name) }))
    .sort((a, b) => a.m.tier - b.m.tier || (a.m.tier < NAME_MATCH.none ? a.m.extra - b.m.extra : 0) || a.i - b.i)
    .map((x) => x.hit);
}

/** Interactive search over an index that ranks by the store alone (not the run's wrapped index):
 * the store's best INTERACTIVE_POOL hits, with the declaration named exactly by the query added
 * when the store did not return it, ranked for a person; the best k. */
export async function searchInteractive(
  index: PremiseIndex,
  query: string,
  k: number,
  opts: { role?: 'premise' | 'theorem' } = {},
): Promise<Hit[]> {
  const theorems = opts.role === 'theorem';
  const pool = theorems
    ? await index.searchTheorems(query, Math.max(k, INTERACTIVE_POOL))
    : await index.searchPremises(query, Math.max(k, INTERACTIVE_POOL));
  const name = query.trim();
  if (/^[^\s]+$/u.test(name) && !pool.some((h) => h.decl.name === name)) {
    const exact = await index.get(name);
    // Only of the side searched: a theorem is no premise (premise-index.ts).
    if (exact && isTheorem(exact) === theorems) pool.unshift({ decl: exact, score: pool[0]?.score ?? 1 });
  }
  return rankForPerson(query, pool).slice(0, k);
}
