// The Illustrate stage of DRIFT: choose at most m example theorems that show how the retrieved
// premises are used, by greedy maximum coverage.
//
// Candidates are the theorems using at least one retrieved premise, ranked by similarity to the
// statement (ties by name). Each step takes the candidate covering the most still-uncovered
// premises; among equal gains, the higher-ranked one. Once no candidate covers anything new
// (every premise covered, or the rest used by no theorem), selection stops, so fewer than m
// examples may come back: an example that adds no coverage only lengthens the prompt.
import type { Example, IllustrateInput } from '../../common/retrieval-types';
import type { PremiseIndex } from './premise-index';
import { leaveOutNames } from './leave-out';

export interface Candidate {
  name: string;
  /** Premise names the candidate uses (any others are ignored). */
  uses: readonly string[];
}

export interface Choice {
  name: string;
  /** Premises newly covered by this choice, in the order the premises were given. */
  covers: string[];
}

/** Greedy max coverage over candidates given best first. Pure; no index involved. */
export function greedyCover(ranked: readonly Candidate[], premises: readonly string[], m: number): Choice[] {
  const uncovered = new Set(premises);
  const remaining = ranked.map((c) => ({ name: c.name, uses: new Set(c.uses) }));
  const chosen: Choice[] = [];
  while (chosen.length < m && uncovered.size > 0) {
    let best = -1;
    let bestGain = 0;
    remaining.forEach((c, i) => {
      let gain = 0;
      for (const p of uncovered) if (c.uses.has(p)) gain++;
      // Strictly greater: on equal gain the earlier (higher-ranked) candidate stays.
      if (gain > bestGain) {
        best = i;
        bestGain = gain;
      }
    });
    if (best < 0) break;
    const [c] = remaining.splice(best, 1);
    const covers = premises.filter((p) => uncovered.has(p) && c!.uses.has(p));
    for (const p of covers) uncovered.delete(p);
    chosen.push({ name: c!.name, covers });
  }
  return chosen;
}

export interface SelectExamplesInput {
  statement: string;
  /** Retrieved premise names. */
  premises: readonly string[];
  m: number;
  exclude?: readonly string[];
}

/** Candidates ranked by similarity to the statement, best first; ties by name. */
export async function rankCandidates(index: PremiseIndex, input: SelectExamplesInput): Promise<Candidate[]> {
  const candidates = await index.theoremsUsing(input.premises, { exclude: input.exclude ?? [] });
  const scores = await index.scoreTheorems(
    input.statement,
    candidates.map((c) => c.name),
  );
  return candidates
    .map((c) => ({ name: c.name, uses: c.uses, score: scores.get(c.name) ?? 0 }))
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export async function selectExamples(index: PremiseIndex, input: SelectExamplesInput): Promise<Example[]> {
  const premises = [...new Set(input.premises)];
  if (input.m <= 0 || premises.length === 0) return [];
  const ranked = await rankCandidates(index, { ...input, premises });
  const chosen = greedyCover(ranked, premises, input.m);
  const decls = await Promise.all(chosen.map((choice) => index.get(choice.name)));
  return chosen.map((choice, i) => {
    const decl = decls[i];
    if (!decl) throw new Error(`illustrate: theorem ${choice.name} vanished from the index of ${index.library}`);
    const ex: Example = { name: decl.name, formal: decl.signature, covers: choice.covers };
    if (decl.informal !== undefined) ex.informal = decl.informal;
    return ex;
  });
}

/** The activity's shape: the index must be the one for `input.library`. */
export async function illustrate(index: PremiseIndex, input: IllustrateInput): Promise<Example[]> {
  if (input.library !== index.library) {
    throw new Error(`illustrate: asked for library ${input.library} but was given the index of ${index.library}`);
  }
  // Under the `file` policy no theorem of the item's own file is shown as an example.
  return selectExamples(index, { ...input, exclude: await leaveOutNames(index, input.exclude, input.leaveOut) });
}
