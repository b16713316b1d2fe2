// A run's outcomes, listed once: the Outcome type, the API's outcome schema and the CLI's
// `--outcome` choices are all derived from this list.

/** `not-compiled`: Lean rejected the last attempt; `refused`: the statement screen refused the
 * last attempt before Lean (whether or not Lean is configured; Lean never saw it);
 * `budget-exhausted`: an agent run spent its steps, tokens or time before an accepted answer. */
export const OUTCOMES = ['faithful', 'unfaithful', 'compiled', 'not-compiled', 'refused', 'unchecked', 'budget-exhausted'] as const;
export type Outcome = (typeof OUTCOMES)[number];
