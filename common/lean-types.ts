// What Lean says, as the Lean worker's activities return it: messages, compile results, name
// lookups and the equivalence check.

export type Severity = 'error' | 'warning' | 'info';

/** A Lean message; positions are 1-based lines and 0-based columns, as Lean reports them. */
export interface LeanMessage {
  severity: Severity;
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  text: string;
}

/** `ok`: compiled (warnings about `sorry` allowed); `error`: Lean reported errors; `refused`:
 * the statement screen refused the text before Lean, nothing was sent to Lean (one error
 * message at the offending place, its text starting `refused before Lean:`, and `reason`);
 * `skipped`: no Lean is configured, nothing was checked; `timeout`: the check ran out of time. */
export type CompileStatus = 'ok' | 'error' | 'refused' | 'skipped' | 'timeout';

/** Who refused a `refused` check when it was not the screen (decision 0017). */
export type RefusedBy = 'tampering' | 'disagreement';

export interface CompileResult {
  status: CompileStatus;
  messages: LeanMessage[];
  /** Why the check was skipped or refused, in words. */
  reason?: string;
  /** Who refused a `refused` check when it was not the screen: `tampering`, the REPL wrote
   * something other than the one reply to the check; `disagreement`, Lean could not parse a text
   * the screen accepted as well formed. Either way the REPL was replaced (decision 0017). */
  refusedBy?: RefusedBy;
  durationMs: number;
  /** Peak resident memory (MB) of the REPL's processes while Lean checked the statement, the
   * imported header's memory included; absent when nothing ran or the platform cannot tell. */
  peakRssMb?: number;
}

export interface InspectNameInput {
  /** A Lean name such as `Nat.Prime`. */
  name: string;
  /** The trust domain of the run asking (common/trust-domain.ts), so its checks stay on its REPLs. */
  domain?: string;
  /** Also `#print` it (its definition or statement). Default true. */
  includePrint?: boolean;
  /** Header to look it up under; default the worker's library header. */
  header?: string;
}

/** What Lean says about a name: `#check @name` and `#print name`. */
export interface NameInfo {
  name: string;
  exists: boolean;
  /** Its type, from `#check`. */
  type?: string;
  /** `#print` output. */
  text?: string;
  /** Why it does not exist or could not be looked up, in words. */
  reason?: string;
}

export interface ResolveNameInput {
  /** The identifier Lean did not know. */
  token: string;
  /** The trust domain of the run asking (common/trust-domain.ts). */
  domain?: string;
  /** Library whose names are searched. */
  library: string;
  /** Namespaces the statement opens or uses; their names rank first. */
  namespaceHints?: string[];
  /** How many confirmed names to return. Default 5. */
  topK?: number;
  header?: string;
}

export interface NameSuggestion {
  name: string;
  /** From `#check`: Lean confirmed the name exists. */
  type?: string;
  /** How it matched (suffix, case, typo, namespace swap). */
  why: string;
}

export interface ResolveNameResult {
  token: string;
  /** Real names close to the token, best first, each confirmed by Lean. */
  suggestions: NameSuggestion[];
  /** Candidates the index offered before Lean confirmed them. */
  considered: number;
}

export interface EquivalenceInput {
  /** The formalization under test: one theorem statement. */
  candidate: string;
  /** The reference statement. */
  gold: string;
  header?: string;
  /** Budget for the whole check. Default: the worker's equivalence timeout. */
  timeoutMs?: number;
  /** The trust domain of the texts (CheckOptions.domain). */
  domain?: string;
}

export interface DirectionResult {
  /** true when a tactic proved this direction and the proof needed the hypothesis. */
  proved: boolean;
  /** The tactic that proved it. */
  tactic?: string;
  /** Tactics that closed the goal without using the hypothesis (they prove nothing here). */
  withoutHypothesis: string[];
  tried: number;
}

/** BEq+-style equivalence: each statement proves the other. */
export interface EquivalenceResult {
  equivalent: boolean;
  candidateToGold: DirectionResult;
  goldToCandidate: DirectionResult;
  /** Set when the check could not run (a statement does not compile, was refused, timed out). */
  reason?: string;
  /** Which statement the screen refused before Lean (then `reason` starts `refused before Lean:`). */
  refused?: 'candidate' | 'gold';
  /** Set when the two cannot be compared without one's context reaching the other (their
   * definitions differ): nothing was proved either way, and `reason` says why. */
  notComparable?: boolean;
  /** Set when a check of the comparison was refused for tampering or a screen/Lean parse
   * disagreement: the comparison ended there, nothing was shown either way (decision 0017). */
  refusedBy?: RefusedBy;
  durationMs: number;
}
