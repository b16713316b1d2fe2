// The tactic scripts of the equivalence check (equivalence.ts), in their own module because the
// screen (statement-safety.ts) must know them too: they are the only proofs other than `sorry`
// that driftline itself ever sends to Lean.

/** The hypothesis theorem's name: the other statement, taken as given. */
export const EQUIVALENCE_HYPOTHESIS = 'driftline_hyp';
const CLOSERS = 'first | rfl | assumption | simp_all | omega | linarith | norm_num';

/** Our tactic scripts, tried in order. `intro` moves the goal's own binders into context. */
export const EQUIVALENCE_TACTICS: readonly { name: string; script: string }[] = [
  { name: 'exact?', script: `intros\nhave driftline_h := @${EQUIVALENCE_HYPOTHESIS}\nexact?` },
  { name: 'apply', script: `intros\napply ${EQUIVALENCE_HYPOTHESIS} <;> (${CLOSERS})` },
  ...[1, 2, 3].map((k) => ({
    name: `convert using ${k}`,
    script: `intros\nconvert ${EQUIVALENCE_HYPOTHESIS} using ${k} <;> (${CLOSERS})`,
  })),
];

/** The stand-in for the hypothesis that proves nothing: a direction that still succeeds with it
 * did not need the other statement. */
export const VACUOUS_HYPOTHESIS = `theorem ${EQUIVALENCE_HYPOTHESIS} : True := trivial`;
