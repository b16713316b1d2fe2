// Candidate real names for an identifier Lean did not know (`Nat.Primee`, `prime_two_le`,
// `Int.sqrt_nonneg`), ranked by how an LLM usually gets a name wrong: right name in a namespace
// it did not open (suffix), wrong capitalisation, a typo, or the right lemma in the wrong
// namespace. Pure: the names come from the library's corpus; Lean confirms the winners.

export interface NameCandidate {
  name: string;
  score: number;
  /** Why it matched, for logs and the repair prompt's readers. */
  why: 'exact' | 'case' | 'suffix' | 'namespace-swap' | 'typo' | 'typo-in-last-part';
}

export interface RankOptions {
  /** Namespaces the statement opens or uses; candidates in them rank higher. */
  namespaceHints?: readonly string[];
  topK?: number;
}

/** Levenshtein distance, or `max + 1` as soon as it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      row.push(value);
      if (value < best) best = value;
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

function lastPart(name: string): string {
  const i = name.lastIndexOf('.');
  return i < 0 ? name : name.slice(i + 1);
}

function namespaceOf(name: string): string {
  const i = name.lastIndexOf('.');
  return i < 0 ? '' : name.slice(0, i);
}

/** How close `name` is to `token`, or undefined when not a plausible replacement. */
export function scoreName(token: string, name: string): Omit<NameCandidate, 'name'> | undefined {
  if (name === token) return { score: 100, why: 'exact' };
  const t = token.toLowerCase();
  const n = name.toLowerCase();
  if (n === t) return { score: 90, why: 'case' };
  if (n.endsWith(`.${t}`)) return { score: 80 - (name.split('.').length - token.split('.').length), why: 'suffix' };
  const tLast = lastPart(t);
  const nLast = lastPart(n);
  if (tLast === nLast && tLast.length >= 3 && namespaceOf(t) !== '' && namespaceOf(n) !== '') {
    return { score: 70, why: 'namespace-swap' };
  }
  const budget = Math.max(1, Math.min(3, Math.floor(t.length / 5)));
  const whole = editDistance(t, n, budget);
  if (whole <= budget) return { score: 65 - 10 * whole, why: 'typo' };
  // `Primee` for `Nat.Prime` (the namespace was not written or not opened).
  const lastBudget = Math.max(1, Math.min(2, Math.floor(tLast.length / 4)));
  const last = editDistance(tLast, nLast, lastBudget);
  if (tLast.length >= 4 && last <= lastBudget && (namespaceOf(t) === '' || namespaceOf(t) === namespaceOf(n))) {
    return { score: 50 - 10 * last, why: 'typo-in-last-part' };
  }
  return undefined;
}

export function rankNameCandidates(token: string, names: Iterable<string>, options: RankOptions = {}): NameCandidate[] {
  const hints = new Set(options.namespaceHints ?? []);
  const found: NameCandidate[] = [];
  for (const name of names) {
    const scored = scoreName(token, name);
    if (!scored) continue;
    const hinted = hints.has(namespaceOf(name)) ? 5 : 0;
    found.push({ name, score: scored.score + hinted, why: scored.why });
  }
  found.sort((a, b) => b.score - a.score || a.name.length - b.name.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return found.slice(0, options.topK ?? 10);
}

export { openedNamespaces, unknownIdentifiers } from '../../common/lean-messages';
