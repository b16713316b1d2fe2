// The tactics a statement's own `by` blocks may use (an auto-param `(h : 0 < n := by norm_num)`,
// a proof term inside a definition `⟨2, by norm_num⟩`). Elaborating a `by` block runs the
// tactic's code, so only tactics that are plain proof search or rewriting are listed, and none
// that compiles or evaluates (`native_decide`, `plausible`, `run_tac`), reaches a network
// (`polyrith`), or prints and edits (`show_term`, `says`, `exact?`). A configuration
// (`(config := …)`, `+opt`, `-opt`) is evaluated at elaboration and is refused separately.
//
// Kept current: lean-image/extract/Keywords.lean dumps every tactic keyword of an environment
// (`lake exe keywords --category tactic Mathlib`); a name listed here that the dump no longer
// holds was renamed or removed upstream, and a new proof-search tactic in the dump may be added
// here after reading what its elaborator runs (docs/lean.md).

// prettier-ignore
export const STATEMENT_TACTICS: ReadonlySet<string> = new Set([
  // Lean core
  'sorry', 'rfl', 'trivial', 'decide', 'simp', 'simp_all', 'dsimp', 'simpa', 'omega', 'exact', 'apply',
  'refine', 'intro', 'intros', 'constructor', 'assumption', 'contradiction', 'exfalso', 'cases', 'induction',
  'rcases', 'obtain', 'rintro', 'rw', 'rewrite', 'rwa', 'erw', 'unfold', 'show', 'have', 'let', 'exists',
  'left', 'right', 'subst', 'symm', 'calc', 'first', 'try', 'repeat', 'all_goals', 'any_goals', 'focus',
  'skip', 'done', 'ext', 'funext', 'congr', 'change', 'norm_cast', 'push_cast', 'exact_mod_cast',
  'infer_instance', 'split', 'by_cases', 'next', 'case', 'specialize', 'generalize', 'clear',
  'rename_i', 'injection', 'and_intros', 'bv_omega', 'simp_arith', 'ac_rfl',
  'apply_assumption', 'exacts',
  // Batteries
  'by_contra', 'absurd', 'split_ands',
  // Mathlib
  'norm_num', 'linarith', 'nlinarith', 'positivity', 'ring', 'ring_nf', 'field_simp', 'abel', 'group',
  'noncomm_ring', 'linear_combination', 'gcongr', 'bound', 'fun_prop', 'continuity',
  'measurability', 'aesop', 'tauto', 'use', 'use!', 'existsi', 'refine\'', 'push_neg', 'contrapose',
  'contrapose!', 'by_contra!', 'choose', 'interval_cases', 'fin_cases', 'filter_upwards', 'nth_rw',
  'nth_rewrite', 'simp_rw', 'zify', 'qify', 'rify', 'lift', 'split_ifs', 'cancel_denoms', 'compute_degree',
  'monicity', 'apply_fun', 'cases\'', 'induction\'', 'set', 'norm_num1', 'linarith!', 'nlinarith!',
  'mono', 'tfae_have', 'tfae_finish', 'constructorm', 'casesm', 'subsingleton', 'trans',
  'convert', 'convert_to', 'congr!', 'assumption_mod_cast', 'ring1', 'abel_nf',
  'reduce_mod_char', 'clear_value', 'rsuffices', 'peel', 'wlog', 'inhabit',
]);
