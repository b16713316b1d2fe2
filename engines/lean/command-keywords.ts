// The words that can start a Lean command, checked in for Lean core, Batteries and Mathlib.
// After a parse error Lean skips ahead to the next token that starts a command and runs it, so
// the screen refuses every one of these wherever it appears outside its own allowed place.
// Words starting with `#` are refused by their first character and need no list. A library's
// own keywords come from its Lean environment (lean-image/extract/Keywords.lean writes them)
// and are added to these, never used instead of them.
import { readFileSync } from 'node:fs';

// prettier-ignore
export const DEFAULT_COMMAND_KEYWORDS: readonly string[] = [
  // Lean core: declarations and their modifiers
  'def', 'theorem', 'abbrev', 'instance', 'example', 'opaque', 'axiom', 'inductive', 'coinductive',
  'structure', 'class', 'mutual', 'private', 'protected', 'public', 'noncomputable', 'unsafe',
  'partial', 'nonrec', 'meta', 'deriving',
  // Lean core: scopes, options, imports
  'section', 'namespace', 'end', 'variable', 'universe', 'open', 'export', 'set_option',
  'attribute', 'import', 'prelude', 'module', 'omit', 'include', 'local', 'scoped', 'init_quot',
  'initialize', 'builtin_initialize', 'add_decl_doc', 'unseal', 'seal', 'recommended_spelling',
  // Lean core: extending the language and running code
  'syntax', 'macro', 'macro_rules', 'elab', 'elab_rules', 'notation', 'infix', 'infixl', 'infixr',
  'prefix', 'postfix', 'declare_syntax_cat', 'binder_predicate', 'run_cmd', 'run_elab', 'run_meta',
  'simproc', 'dsimproc', 'simproc_decl', 'dsimproc_decl', 'builtin_simproc', 'builtin_dsimproc',
  'builtin_simproc_decl', 'builtin_dsimproc_decl', 'register_builtin_option', 'register_option',
  'register_simp_attr', 'register_label_attr', 'register_error_explanation', 'declare_config_elab',
  'declare_command_config_elab', 'declare_simp_like_tactic', 'grind_pattern', 'builtin_grind_pattern',
  'gen_injective_theorems', 'test_extern', 'show_panel_widgets', 'builtin_initialize',
  // Batteries
  'lemma', 'alias', 'library_note', 'universes', 'declare_uint_theorems',
  // Mathlib
  'irreducible_def', 'notation3', 'assert_not_exists', 'assert_not_imported', 'assert_exists',
  'initialize_simps_projections', 'suppress_compilation', 'unsuppress_compilation',
  'compile_inductive', 'compile_def', 'proof_wanted', 'mk_iff_of_inductive_prop',
  'declare_aesop_rule_sets', 'add_aesop_rules', 'erase_aesop_rules', 'count_heartbeats', 'recall',
  'open_locale', 'localized', 'variable?', 'set_premise_selector', 'insert_to_additive_translation',
  'extend_docs', 'whatsnew', 'lemma_wanted', 'assert_no_sorry', 'unfold_let', 'register_hint',
  'register_try?_tactic', 'adaptation_note', 'widget', 'elab_as_elim', 'simps', 'sudo',
  'with_weak_namespace', 'copy_doc_string', 'initialize_simps_projections?',
  // Found by reading the command category again (issue 34): reachable after a forced parse error.
  'unif_hint', 'unset_option', 'elab_stx_quot', 'open_private', 'export_private', 'mixfix',
  'tactic_extension', 'register_tactic_tag', 'register_linter_set', 'set_library_suggestions',
  'deriving_instance', 'reprove', 'addDeclDoc', 'lean_lib', 'lean_exe', 'require', 'package',
];

/** Prefixes that only command words use: `builtin_…`, `register_…`, `declare_…`. */
export const COMMAND_KEYWORD_PREFIXES: readonly string[] = ['builtin_', 'register_', 'declare_'];

/** Reads a library's keyword dump (a JSON array of token strings) and adds the default list. */
export function loadCommandKeywords(file: string | undefined): ReadonlySet<string> {
  const words = new Set<string>(DEFAULT_COMMAND_KEYWORDS);
  if (!file) return words;
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(parsed) || parsed.some((w) => typeof w !== 'string')) {
    throw new Error(`${file}: expected a JSON array of Lean command keywords`);
  }
  for (const w of parsed as string[]) if (w.trim()) words.add(w.trim());
  return words;
}
