// The leave-out policy: which names a run (or an evaluated benchmark item) hides from retrieval.
//
// `item` hides the names given (the item's own declaration). `file` also hides every theorem of
// the item's own source file: ConNF items are theorems of the library, and the theorems of one
// file share most of their premises, so with `item` alone the analogy votes, the usage prior and
// the examples are fed by the item's next-door neighbours. That measures how well a statement
// from inside the library is served; `file` measures what a user formalizing a new development
// gets. Definitions are never hidden by `file`: the premises a new development needs are still
// the library's definitions, including those of its own file.
//
// Hidden theorems go into `exclude`, which every consumer already honours: the analogy
// re-ranking never lets an excluded theorem vote, the usage prior does not count its uses, and
// illustration never picks it as an example.
import type { LeaveOutPolicy } from '../../common/retrieval-types';
import type { PremiseIndex } from './premise-index';

/** `exclude` widened by the policy (the given names first, then the hidden theorems). */
export async function leaveOutNames(
  index: Pick<PremiseIndex, 'sameFileTheorems'>,
  exclude: readonly string[],
  policy: LeaveOutPolicy = 'item',
): Promise<string[]> {
  if (policy === 'item' || exclude.length === 0) return [...exclude];
  if (policy !== 'file') throw new Error(`unknown leave-out policy "${String(policy)}" (item or file)`);
  const names = new Set(exclude);
  for (const t of await index.sameFileTheorems(exclude)) names.add(t);
  return [...names];
}
