// Retrieval as runs and activities see it: sub-queries, premises, examples, and the retrieve and
// illustrate activities' inputs and outputs.
import type { RunConfig } from './run-config-schema';

/** How premises are found for a run. `drift`: top-1 per sub-query; `monolithic`: the whole
 * statement as one query, top-k (the RAutoformalizer baseline); `oracle`: the gold premises;
 * `none`: no premises at all. */
export type RetrievalMode = RunConfig['retrieval'];

/** How much of an item's own neighbourhood retrieval hides. `item`: the names in `exclude`
 * (the item's own declaration) are never retrieved or shown. `file`: besides, no theorem of the
 * source file (module) of an excluded declaration votes in analogy re-ranking, counts in the
 * usage prior or is shown as an example; definitions stay retrievable. */
export type LeaveOutPolicy = 'item' | 'file';

/** One atomic concept of a statement: an informal phrase and the decomposer's guess at its
 * formal form (e.g. `Nat.Prime p`). */
export interface SubQuery {
  phrase: string;
  formal: string;
}

/** A library declaration shown to the formalizer as a premise. */
export interface Premise {
  name: string;
  kind: string;
  /** The pretty-printed declaration (signature). */
  declaration: string;
  /** Source text where the corpus has it. */
  source?: string;
  module?: string;
  /** Index of the sub-query that found it, for `drift` retrieval. */
  subquery?: number;
  score?: number;
}

/** An example theorem chosen to show how premises are used. */
export interface Example {
  name: string;
  /** The formal statement of the theorem. */
  formal: string;
  /** Its informal statement, where the corpus has one. */
  informal?: string;
  /** The retrieved premises this example newly covered when it was chosen. */
  covers: string[];
}

export interface RetrieveInput {
  library: string;
  statement: string;
  subqueries: SubQuery[];
  mode: RetrievalMode;
  topK: number;
  exclude: string[];
  /** Default `item`. */
  leaveOut?: LeaveOutPolicy;
  gold: string[];
  /** A pinned index version; absent: the library alias's current version. */
  indexVersion?: string;
}

export interface RetrieveOutput {
  premises: Premise[];
  notes: string[];
  /** The index version searched (the library's alias at that moment); later stages use it. */
  indexVersion?: string;
}

export interface IllustrateInput {
  library: string;
  statement: string;
  premises: string[];
  m: number;
  exclude: string[];
  /** The version retrieve searched; absent: the library's current version. */
  indexVersion?: string;
  /** Default `item`. */
  leaveOut?: LeaveOutPolicy;
}
