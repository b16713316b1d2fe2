// The screen: what may reach Lean. Lean runs arbitrary code at elaboration time (`#eval`,
// `run_cmd`, macros, `initialize`, native evaluation, tactic configurations, `include_str`),
// and after a parse error it resumes at the error and runs whatever command it finds next. So
// the screen works on the tokens of a real Lean lexer (lexer.ts) that refuses every text Lean
// would read with a lexical error, and accepts a whitelist grammar, not a blacklist:
//
//   text        := import* command* declaration end*        (a header: import* command*)
//   command     := open … [in] | set_option <listed option> <bounded value> [in] | universe …
//                | variable <binders> | namespace X | section [X] | noncomputable section | end [X]
//                | definition | notation
//   definition  := [@[listed attrs]] [private|protected] [noncomputable]
//                  (def | abbrev | instance | structure | class | inductive) <term tokens>
//                  [deriving <listed classes>]
//   notation    := [local|scoped] (notation | infix | infixl | infixr | prefix | postfix)[:prec]
//                  <plain template: symbol atoms and names> => <term without `by`>
//   declaration := [@[simp]] [private|protected] (theorem N | lemma N | example) <signature> := [by] sorry
//
// Term tokens are screened one by one: every word that can start a command, every `#` word,
// every evaluating elaborator (ESCAPE_HATCHES) is refused, `by` blocks admit only the listed
// tactics (tactic-names.ts) without configuration, brackets must match, and nesting and length
// are capped. Lean's term grammar is not modelled in full: a term-level parse error is possible
// in an accepted text. What makes that safe is that the lexers agree, so Lean resumes at a token
// boundary of ours, and every token of ours was screened (docs/decisions/0018-lean-screen-grammar.md).
// The text Lean then sees is rebuilt from the tokens (comments blanked, literals re-encoded,
// option values bounded), not forwarded. Entry points, one grammar:
//   - screenStatement: a statement from outside (formalizer, repair, agent, API, benchmark gold);
//   - screenHeader: a check's header (imports, preamble and definitions, no theorem);
//   - screenReplInput: the one gate in front of every REPL (repl-pool.ts), which also admits the
//     few commands driftline writes itself (the equivalence check's proofs, `#check @name`);
//   - screenCheckSource: the same gate on the header and body driftline composes for a REPL.
// A refusal is a compiler-style message at the offending token, so the repair loop can act on it.
// Pure.
import type { LeanMessage } from '../../common/lean-types';
import { COMMAND_KEYWORD_PREFIXES, DEFAULT_COMMAND_KEYWORDS } from './command-keywords';
import { EQUIVALENCE_TACTICS } from './equivalence-tactics';
import { canonicalLiteral, fallbackResume, isIdFirst, isIdRest, positionAt, tokenize, type Token } from './lexer';
import { STATEMENT_TACTICS } from './tactic-names';

/** Version of the screen's rules, recorded with results so a reader knows what was screened. */
export const SCREEN_VERSION = 'grammar-definitions-2';

export interface SafetyPolicy {
  /** Import roots allowed (a root allows its submodules): `Mathlib` allows `Mathlib.Data.Nat`. */
  allowedImports: readonly string[];
  /** Options `set_option` may set; their values are bounded (OPTION_BOUNDS). */
  allowedOptions: readonly string[];
  /** Words that start a command; default DEFAULT_COMMAND_KEYWORDS (plus a library's own). */
  commandKeywords?: ReadonlySet<string>;
  /** When given, `open X` must name a namespace this accepts (the library's index knows it). */
  knownNamespace?: (name: string) => boolean;
}

export const DEFAULT_SAFETY_POLICY: SafetyPolicy = {
  allowedImports: ['Mathlib', 'ConNF', 'Batteries', 'Aesop', 'Qq', 'Init', 'Std'],
  allowedOptions: [
    'autoImplicit',
    'relaxedAutoImplicit',
    'checkBinderAnnotations',
    'maxHeartbeats',
    'synthInstance.maxHeartbeats',
    'maxRecDepth',
    'pp.all',
    'pp.proofs',
    'pp.funBinderTypes',
    'linter.unusedVariables',
    'linter.style.longLine',
    'push_neg.use_distrib',
  ],
};

/** Numeric options: Lean sees the value clamped into [1, max]; 0 (no limit) becomes max. */
const OPTION_BOUNDS: ReadonlyMap<string, number> = new Map([
  ['maxHeartbeats', 1_000_000],
  ['synthInstance.maxHeartbeats', 1_000_000],
  ['maxRecDepth', 8_192],
]);
export const MAX_HEARTBEATS = OPTION_BOUNDS.get('maxHeartbeats')!;

/** Caps: no theorem statement needs more, and past them Lean's parser is the risk. */
export const SCREEN_LIMITS = {
  maxChars: 30_000,
  maxTokens: 6_000,
  maxDepth: 64,
  maxNumberDigits: 400,
  maxDeclarations: 3,
  maxDefinitions: 40,
} as const;

const DEFAULT_KEYWORDS: ReadonlySet<string> = new Set(DEFAULT_COMMAND_KEYWORDS);

/** Words refused anywhere in a term, each with why: they evaluate code or swap it in. */
const ESCAPE_HATCHES: ReadonlyMap<string, string> = new Map([
  ['run_tac', '`run_tac` runs code'],
  ['run_cmd', '`run_cmd` runs code'],
  ['run_elab', '`run_elab` runs code'],
  ['run_meta', '`run_meta` runs code'],
  ['by_elab', '`by_elab` runs code'],
  ['include_str', '`include_str` evaluates its argument at elaboration'],
  ['include_bytes', '`include_bytes` evaluates its argument at elaboration'],
  ['native_decide', '`native_decide` compiles and runs code'],
  ['native', 'native evaluation (`native := true`, `+native`) compiles and runs code'],
  ['ofReduceBool', '`Lean.ofReduceBool` makes the kernel run compiled code'],
  ['ofReduceNat', '`Lean.ofReduceNat` makes the kernel run compiled code'],
  ['reduceBool', '`Lean.reduceBool` makes the kernel run compiled code'],
  ['reduceNat', '`Lean.reduceNat` makes the kernel run compiled code'],
  ['implemented_by', '`@[implemented_by]` swaps in other code'],
  ['extern', '`@[extern]` calls foreign code'],
  ['init', '`@[init]` runs code when the file is imported'],
  ['csimp', '`@[csimp]` swaps in other code'],
  ['plausible', '`plausible` compiles and runs code'],
  ['slim_check', '`slim_check` compiles and runs code'],
  ['polyrith', '`polyrith` calls a network service'],
  ['bv_decide', '`bv_decide` runs an external SAT solver'],
  ['bv_check', '`bv_check` reads a file and runs a checker'],
  ['bv_decide?', '`bv_decide?` runs an external SAT solver'],
  ['dbg_trace', '`dbg_trace` runs code'],
  ['dbgTrace', '`dbgTrace` runs code'],
  ['axiom', 'new axioms are not allowed: they would make any statement provable'],
  ['initialize', '`initialize` runs code when the file is imported'],
  ['builtin_initialize', '`builtin_initialize` runs code when the file is imported'],
  ['elab', 'defining elaborators is not allowed'],
  ['elab_rules', 'defining elaborators is not allowed'],
  ['macro', 'defining macros is not allowed'],
  ['macro_rules', 'defining macros is not allowed'],
  ['syntax', 'defining syntax is not allowed'],
  ['declare_syntax_cat', 'defining syntax is not allowed'],
  ['unsafe', '`unsafe` code is not allowed'],
  ['partial', '`partial` definitions are compiled, not checked, and are not allowed'],
  ['opaque', '`opaque` constants may carry implementations and are not allowed'],
  ['decreasing_by', '`decreasing_by` runs tactics at declaration time; write a structurally recursive definition'],
  ['show_term', '`show_term` is not a statement tactic'],
]);

/** Why a `#` command is refused (any other `#` word: not the statement). */
const HASH_WHY: ReadonlyMap<string, string> = new Map([
  ['#eval', '`#eval` runs code'],
  ['#eval!', '`#eval!` runs code'],
  ['#exit', '`#exit` stops the file'],
]);

/** `#` commands of Lean core, Batteries and Mathlib (a library's dump adds its own). */
// prettier-ignore
const HASH_COMMANDS = [
  '#eval', '#eval!', '#check', '#check_failure', '#print', '#reduce', '#synth', '#exit', '#guard', '#guard_msgs', '#guard_expr',
  '#help', '#lint', '#find', '#simp', '#norm_num', '#conv', '#whnf', '#whnfR', '#leansearch', '#loogle', '#moogle', '#html',
  '#test', '#sample', '#explode', '#min_imports', '#count_heartbeats', '#time', '#find_home', '#kind', '#where', '#version',
  '#long_names', '#long_instances', '#list_linters', '#instances', '#check_tactic', '#check_simp', '#redundant_imports',
  '#adaptation_note', '#discr_tree_key', '#discr_tree_simp_key', '#import_path', '#parse', '#trans_imports', '#widget',
  '#info_trees', '#show_unused', '#push_neg', '#unfold?', '#lift_lets', '#defeq_abuse', '#e', '#s', '#c', '#p', '#r', '#h', '#l',
];

const THEOREM_KEYWORDS: ReadonlySet<string> = new Set(['theorem', 'lemma', 'example']);
const DEFINITION_KEYWORDS: ReadonlySet<string> = new Set(['def', 'abbrev', 'instance', 'structure', 'class', 'inductive']);
const NOTATION_KEYWORDS: ReadonlySet<string> = new Set(['notation', 'infix', 'infixl', 'infixr', 'prefix', 'postfix']);
const MODIFIERS: ReadonlySet<string> = new Set(['private', 'protected']);
/** Modifiers refused, each with why. */
const REFUSED_MODIFIERS: ReadonlyMap<string, string> = new Map([
  ['unsafe', '`unsafe` code is not allowed'],
  ['partial', '`partial` definitions are compiled, not checked, and are not allowed'],
  ['nonrec', '`nonrec` is not needed by a statement'],
  ['meta', '`meta` definitions run at compile time'],
  ['public', 'module-system modifiers are not needed by a statement'],
]);
/** Attributes that only tag a declaration for the simplifier or unfolding: no code runs. */
const ALLOWED_ATTRIBUTES: ReadonlySet<string> = new Set(['simp', 'reducible', 'irreducible', 'inline', 'ext']);
/** Classes `deriving` may name: Lean core's and Mathlib's own handlers generate the instance;
 * no user code runs (decision record 0018). */
const DERIVABLE: ReadonlySet<string> = new Set([
  'DecidableEq',
  'Repr',
  'BEq',
  'Hashable',
  'Ord',
  'Inhabited',
  'Nonempty',
  'Fintype',
  'Countable',
]);
const OPENERS: ReadonlyMap<string, string> = new Map([
  ['(', ')'],
  ['[', ']'],
  ['{', '}'],
  ['⦃', '⦄'],
  ['⟨', '⟩'],
  ['⟦', '⟧'],
  ['⦋', '⦌'],
]);
const CLOSERS: ReadonlySet<string> = new Set(OPENERS.values());

export interface ScreenedStatement {
  /** The text Lean is sent, rebuilt from the tokens: comments blanked (line breaks kept, so
   * Lean's positions are the input's), literals re-encoded, option values bounded. */
  text: string;
  imports: string[];
  /** The rebuilt commands before the declaration (its definitions among them), imports left out. */
  preamble: string;
  /** Names of the definitions, structures, notations… before the declaration, in order. */
  definitions: string[];
  keyword: 'theorem' | 'lemma' | 'example';
  name?: string;
  /** The rebuilt binders and type: what follows the name up to the `:=`. */
  signature: string;
}

export type Screened<T> =
  { ok: true; value: T } | { ok: false; message: LeanMessage; reason: string; line: number; column: number; construct?: string };

class Refusal extends Error {
  constructor(
    readonly token: Token | undefined,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const ADVICE =
  'Write the definitions the statement needs (def, abbrev, structure, inductive, instance, notation), then one theorem ending in `:= by sorry`.';

function refusalMessage(code: string, token: Token | undefined, reason: string): LeanMessage {
  const from = token?.start ?? 0;
  const start = positionAt(code, from);
  const end = positionAt(code, from + (token?.text.length ?? 0));
  return {
    severity: 'error',
    line: start.line,
    column: start.column,
    endLine: end.line,
    endColumn: end.column,
    text: `refused before Lean: ${reason}. ${ADVICE}`,
  };
}

type Mode = 'statement' | 'gold' | 'header' | 'repl';

/** The proofs driftline writes itself, as token texts: only the REPL gate admits them. */
const TRUSTED_PROOFS: readonly string[][] = [
  ['sorry'],
  ['by', 'sorry'],
  ['trivial'],
  ...EQUIVALENCE_TACTICS.map((t) => ['by', ...significant(tokenize(t.script)).map((k) => k.text)]),
];

function significant(tokens: readonly Token[]): Token[] {
  return tokens.filter((t) => t.kind !== 'space' && t.kind !== 'comment' && t.kind !== 'doc');
}

interface Parsed {
  pieces: string[];
  imports: string[];
  statement?: Omit<ScreenedStatement, 'text'>;
}

/** A `by` block being read: the bracket depth it started at, and whether the next token starts
 * a tactic (and so must be a listed one). */
interface TacticBlock {
  depth: number;
  expectTactic: boolean;
  /** The last tactic word read in this block: after `first`, `|` starts a tactic; after
   * `case …`/`next …`, `=>` does. */
  lastTactic?: string;
  /** Column of the block's first tactic: Lean's tactic sequence continues on a later line only
   * at that column or right of it (`sepByIndent`'s `checkColGe`); left of it the block is over
   * (`prop := by simp` then the next field of a `where`). */
  column?: number;
}

/** Tactics whose next token is itself a tactic. */
const TACTIC_COMBINATORS: ReadonlySet<string> = new Set(['try', 'repeat', 'all_goals', 'any_goals', 'focus', 'first']);

/** Scanning state of one term: open brackets and `by` blocks. */
interface TermState {
  stack: Token[];
  tactics: TacticBlock[];
  /** Bracket depths of `let`/`have` bindings whose `:=` has not come yet: that `:=` is theirs,
   * not the end of the statement. */
  bindings: number[];
  /** A notation's right side may hold no `by`. */
  noTactics?: string;
}

class Parser {
  private readonly sig: Token[];
  private readonly index = new Map<Token, number>();
  private p = 0;
  private readonly keywords: ReadonlySet<string>;
  /** Per token, the text Lean is sent. */
  readonly pieces: string[];
  private opened = 0;
  private declarations = 0;
  private definitionCount = 0;
  private importsDone = false;
  private importEnd = 0;
  readonly importModules: string[] = [];
  readonly definitionNames: string[] = [];
  statement?: Omit<ScreenedStatement, 'text'>;

  constructor(
    private readonly code: string,
    private readonly tokens: Token[],
    private readonly policy: SafetyPolicy,
    private readonly mode: Mode,
  ) {
    this.keywords = policy.commandKeywords ?? DEFAULT_KEYWORDS;
    this.sig = significant(tokens);
    tokens.forEach((t, i) => this.index.set(t, i));
    this.pieces = tokens.map((t) => rebuilt(t));
  }

  private peek(offset = 0): Token | undefined {
    return this.sig[this.p + offset];
  }

  private next(): Token | undefined {
    return this.sig[this.p++];
  }

  private is(t: Token | undefined, text: string): boolean {
    return t !== undefined && t.text === text && (t.kind === 'ident' || t.kind === 'symbol');
  }

  /** True for a token that can start a command. */
  startsCommand(t: Token | undefined): boolean {
    if (!t) return false;
    if (t.kind === 'hash' || t.kind === 'doc') return true;
    if (t.kind === 'symbol' && t.text === '@[') return true;
    return t.kind === 'ident' && (this.isKeyword(t.text) || THEOREM_KEYWORDS.has(t.text));
  }

  private isKeyword(word: string): boolean {
    return this.keywords.has(word) || COMMAND_KEYWORD_PREFIXES.some((p) => word.startsWith(p));
  }

  /** The whitespace/comment tokens between significant tokens `a` and `a + 1` hold a line break. */
  private lineBreakBefore(t: Token): boolean {
    for (let k = this.index.get(t)! - 1; k >= 0; k--) {
      const prev = this.tokens[k]!;
      if (prev.kind !== 'space' && prev.kind !== 'comment' && prev.kind !== 'doc') return false;
      if (prev.text.includes('\n')) return true;
    }
    return false;
  }

  /** Slice of the rebuilt text from significant token `a` (inclusive) to `b` (exclusive). */
  private textBetween(a: number, b: number): string {
    const from = a < this.sig.length ? this.index.get(this.sig[a]!)! : this.tokens.length;
    const to = b < this.sig.length ? this.index.get(this.sig[b]!)! : this.tokens.length;
    return this.pieces.slice(from, to).join('');
  }

  parse(): void {
    while (this.p < this.sig.length) {
      const t = this.peek()!;
      if (t.kind === 'ident' && t.text === 'import') {
        if (this.importsDone) throw new Refusal(t, '`import` after other commands (Lean accepts imports only at the top)');
        this.imports();
        continue;
      }
      if (!this.importsDone) {
        this.importsDone = true;
        this.importEnd = this.p;
      }
      // After the statement only the `end`s of its namespaces and sections may follow.
      if (this.declarations > 0 && this.mode !== 'repl' && !(t.kind === 'ident' && t.text === 'end')) throw this.unexpected(t);
      if (this.preambleCommand()) continue;
      if (this.mode === 'repl' && this.toolCommand()) continue;
      if (this.notationStart()) {
        this.notation();
        continue;
      }
      const kw = this.declarationKeyword();
      if (kw && DEFINITION_KEYWORDS.has(kw.text)) {
        this.definition();
        continue;
      }
      if (kw && THEOREM_KEYWORDS.has(kw.text)) {
        if (this.mode === 'header') throw new Refusal(t, 'a theorem in a header (a header holds imports, `open` lines and definitions)');
        if (this.mode !== 'repl' && this.declarations >= 1)
          throw new Refusal(t, 'anything after the statement: exactly one theorem, lemma or example is checked');
        if (this.declarations >= SCREEN_LIMITS.maxDeclarations)
          throw new Refusal(t, `more than ${SCREEN_LIMITS.maxDeclarations} declarations in one check`);
        this.declaration();
        continue;
      }
      throw this.unexpected(t);
    }
    if (this.mode === 'statement' || this.mode === 'gold') {
      if (this.declarations === 0) throw new Refusal(undefined, 'there is no theorem, lemma or example to check');
    }
  }

  private unexpected(t: Token): Refusal {
    if (t.kind === 'bad') return new Refusal(t, t.problem ?? 'text Lean may read differently');
    if (t.kind === 'hash')
      return new Refusal(t, HASH_WHY.get(t.text) ?? `\`${t.text}\`: commands other than the statement are not checked`);
    if (t.kind === 'ident' && ESCAPE_HATCHES.has(t.text)) return new Refusal(t, ESCAPE_HATCHES.get(t.text)!);
    if (this.declarations > 0 && this.mode !== 'repl') return new Refusal(t, `anything after the statement (\`${t.text}\`)`);
    if (this.startsCommand(t))
      return new Refusal(t, `\`${t.text}\`: only definitions, notations and one theorem, lemma or example are checked, not this command`);
    return new Refusal(t, `text outside any command (\`${t.text}\`)`);
  }

  private imports(): void {
    this.next();
    let count = 0;
    while (this.peek()?.kind === 'ident' && !this.startsCommand(this.peek())) {
      const m = this.next()!;
      // A plain dotted name: Lean joins `«…»` parts into a file path, whatever they hold.
      if (m.text.includes('«') || m.text.split('.').some((part) => !/^[A-Za-z_][A-Za-z0-9_']*$/.test(part)))
        throw new Refusal(m, `importing \`${m.text}\`: a module name is plain ASCII parts joined by dots`);
      const allowed = this.policy.allowedImports.some((root) => m.text === root || m.text.startsWith(`${root}.`));
      if (!allowed) throw new Refusal(m, `importing \`${m.text}\` (allowed: ${this.policy.allowedImports.join(', ')})`);
      this.importModules.push(m.text);
      count++;
    }
    if (count === 0) throw new Refusal(this.peek(), '`import` without a module name');
  }

  /** One preamble command, if one starts here. */
  private preambleCommand(): boolean {
    const t = this.peek()!;
    if (t.kind !== 'ident') return false;
    switch (t.text) {
      case 'open':
        this.next();
        this.openArgs(t);
        this.optionalIn();
        return true;
      case 'set_option':
        this.next();
        this.setOption(t);
        this.optionalIn();
        return true;
      case 'universe':
      case 'universes': {
        this.next();
        let n = 0;
        while (this.plainIdent(this.peek())) {
          this.next();
          n++;
        }
        if (n === 0) throw new Refusal(t, '`universe` without a universe name');
        return true;
      }
      case 'variable': {
        this.next();
        let n = 0;
        while (this.peek()?.kind === 'symbol' && OPENERS.has(this.peek()!.text) && this.peek()!.text !== '⟨') {
          this.group();
          n++;
        }
        if (n === 0) throw new Refusal(t, '`variable` takes bracketed binders only');
        this.optionalIn();
        return true;
      }
      case 'namespace':
        this.next();
        if (!this.plainIdent(this.peek())) throw new Refusal(t, '`namespace` without a name');
        this.next();
        this.opened++;
        return true;
      case 'section':
        this.next();
        if (this.plainIdent(this.peek()) && !this.lineBreakBefore(this.peek()!)) this.next();
        this.opened++;
        return true;
      case 'noncomputable':
        if (!this.is(this.peek(1), 'section')) return false;
        this.next();
        this.next();
        if (this.plainIdent(this.peek()) && !this.lineBreakBefore(this.peek()!)) this.next();
        this.opened++;
        return true;
      case 'end':
        if (this.opened === 0) throw new Refusal(t, '`end` without a `namespace` or `section`');
        this.next();
        if (this.plainIdent(this.peek()) && !this.lineBreakBefore(this.peek()!)) this.next();
        this.opened--;
        return true;
      default:
        return false;
    }
  }

  /** After `@[…]` and modifiers, the word that says what is declared (not consumed). */
  private declarationKeyword(): Token | undefined {
    let k = 0;
    if (this.is(this.peek(), '@[')) {
      while (this.peek(k) && !this.is(this.peek(k), ']')) k++;
      k++;
    }
    for (;;) {
      const t = this.peek(k);
      if (t?.kind !== 'ident') return undefined;
      if (MODIFIERS.has(t.text) || t.text === 'noncomputable' || REFUSED_MODIFIERS.has(t.text)) k++;
      else return DEFINITION_KEYWORDS.has(t.text) || THEOREM_KEYWORDS.has(t.text) ? t : undefined;
    }
  }

  /** `@[attr, …]`, then `private`/`protected`, `noncomputable`; refuses the others. */
  private modifiers(allowNoncomputable: boolean): void {
    if (this.is(this.peek(), '@[')) {
      const open = this.next()!;
      for (;;) {
        const attr = this.next();
        if (!attr || attr.kind !== 'ident') throw new Refusal(attr ?? open, 'an attribute list that is not closed');
        if (!ALLOWED_ATTRIBUTES.has(attr.text))
          throw new Refusal(attr, ESCAPE_HATCHES.get(attr.text) ?? `the attribute \`${attr.text}\` is not allowed`);
        const sep = this.next();
        if (this.is(sep, ']')) break;
        if (!this.is(sep, ',')) throw new Refusal(sep ?? attr, `the attribute \`${attr.text}\` takes no arguments here`);
      }
    }
    for (;;) {
      const t = this.peek();
      if (t?.kind !== 'ident') return;
      const refused = REFUSED_MODIFIERS.get(t.text);
      if (refused) throw new Refusal(t, refused);
      if (MODIFIERS.has(t.text) || (allowNoncomputable && t.text === 'noncomputable')) this.next();
      else return;
    }
  }

  /** `def`, `abbrev`, `instance`, `structure`, `class`, `inductive`: a name, then term tokens
   * up to the next command, with `deriving` of listed classes at the end. */
  private definition(): void {
    if (this.definitionCount >= SCREEN_LIMITS.maxDefinitions)
      throw new Refusal(this.peek(), `more than ${SCREEN_LIMITS.maxDefinitions} definitions in one text`);
    this.definitionCount++;
    this.modifiers(true);
    const kw = this.next()!;
    if (kw.text === 'class' && this.is(this.peek(), 'inductive')) throw new Refusal(this.peek(), '`class inductive` is not allowed');
    if (kw.text === 'instance') {
      if (this.is(this.peek(), '(') && this.peek(1)?.kind === 'ident' && this.is(this.peek(2), ':='))
        throw new Refusal(this.peek(), `an instance \`(${this.peek(1)!.text} := …)\`: priorities are not needed by a statement`);
      if (this.plainIdent(this.peek()) && !this.is(this.peek(1), '.')) this.definitionNames.push(this.next()!.text);
      else this.definitionNames.push('instance');
    } else {
      const name = this.next();
      if (!this.plainIdent(name)) throw new Refusal(name ?? kw, `\`${kw.text}\` needs a name`);
      this.definitionNames.push(name!.text);
    }
    const state: TermState = { stack: [], tactics: [], bindings: [] };
    let body = 0;
    for (;;) {
      const t = this.peek();
      if (!t) break;
      if (state.stack.length === 0 && this.is(t, 'deriving')) {
        this.deriving();
        break;
      }
      if (state.stack.length === 0 && this.startsCommand(t) && !this.termPosition(t)) break;
      this.termToken(t, state);
      this.next();
      body++;
    }
    this.closeTerm(state, kw);
    if (body === 0) throw new Refusal(kw, `\`${kw.text}\` has no body`);
  }

  /** `open … in` and `set_option … in` right after `:=`, `=>`, an operator or an opening
   * bracket are a term's own (Lean's term parser is reading); after a name, number or closing
   * bracket they start the next command. */
  private termPosition(t: Token): boolean {
    if (!(t.kind === 'ident' && (t.text === 'open' || t.text === 'set_option'))) return false;
    const prev = this.sig[this.p - 1];
    return prev?.kind === 'symbol' && !CLOSERS.has(prev.text);
  }

  private deriving(): void {
    const kw = this.next()!;
    if (this.is(this.peek(), 'instance')) throw new Refusal(this.peek(), '`deriving instance` is not allowed');
    for (;;) {
      const cls = this.next();
      if (!cls || cls.kind !== 'ident') throw new Refusal(cls ?? kw, '`deriving` without a class');
      if (!DERIVABLE.has(cls.text)) throw new Refusal(cls, `\`deriving ${cls.text}\` (allowed: ${[...DERIVABLE].join(', ')})`);
      if (!this.is(this.peek(), ',')) return;
      this.next();
    }
  }

  private notationStart(): boolean {
    const t = this.peek();
    if (t?.kind !== 'ident') return false;
    if (NOTATION_KEYWORDS.has(t.text)) return true;
    return (t.text === 'local' || t.text === 'scoped') && this.peek(1)?.kind === 'ident' && NOTATION_KEYWORDS.has(this.peek(1)!.text);
  }

  /** `[local] notation[:prec] <atoms and names> => term`, `infix[:prec] " op " => f`. */
  private notation(): void {
    if (this.definitionCount >= SCREEN_LIMITS.maxDefinitions)
      throw new Refusal(this.peek(), `more than ${SCREEN_LIMITS.maxDefinitions} definitions in one text`);
    this.definitionCount++;
    if (this.is(this.peek(), 'local') || this.is(this.peek(), 'scoped')) this.next();
    const kw = this.next()!;
    if (this.is(this.peek(), ':')) {
      this.next();
      this.precedence(kw);
    }
    if (this.is(this.peek(), '(')) throw new Refusal(this.peek(), `\`${kw.text} (name := …)\` or a priority is not allowed`);
    let atoms = 0;
    let names = 0;
    for (;;) {
      const t = this.peek();
      if (!t) throw new Refusal(kw, `\`${kw.text}\` without \`=>\``);
      if (this.is(t, '=') && this.is(this.peek(1), '>')) break;
      if (t.kind === 'string') {
        this.atom(t);
        this.next();
        atoms++;
        continue;
      }
      if (kw.text === 'notation' && this.plainIdent(t)) {
        this.next();
        names++;
        if (this.is(this.peek(), ':')) {
          this.next();
          this.precedence(t);
        }
        continue;
      }
      throw new Refusal(t, `a \`${kw.text}\` template holds only quoted symbols and names (found \`${t.text}\`)`);
    }
    if (atoms === 0 || (kw.text !== 'notation' && (atoms !== 1 || names !== 0)))
      throw new Refusal(kw, `\`${kw.text}\` needs ${kw.text === 'notation' ? 'a quoted symbol' : 'exactly one quoted symbol'}`);
    this.next();
    this.next();
    this.definitionNames.push(`${kw.text} ${this.sig.slice(0, this.p).length}`);
    const state: TermState = { stack: [], tactics: [], bindings: [], noTactics: `a \`${kw.text}\` whose right side is a tactic block` };
    let body = 0;
    while (this.peek() && !(state.stack.length === 0 && this.startsCommand(this.peek()))) {
      this.termToken(this.peek()!, state);
      this.next();
      body++;
    }
    this.closeTerm(state, kw);
    if (body === 0) throw new Refusal(kw, `\`${kw.text}\` has nothing after \`=>\``);
  }

  private precedence(at: Token): void {
    const p = this.next();
    if (!p || !(p.kind === 'number' || (p.kind === 'ident' && ['max', 'arg', 'lead', 'min'].includes(p.text))) || p.text.length > 4)
      throw new Refusal(p ?? at, 'a precedence is a small number or `max`');
  }

  /** A notation's quoted symbol becomes a token of Lean's token table, which changes how Lean
   * reads every later text: only symbols that cannot join a comment, literal, name or `:=`. */
  private atom(t: Token): void {
    const value = (t.value ?? '').trim();
    const chars = [...value];
    const singleLetter = chars.length === 1 && isIdFirst(chars[0]!.codePointAt(0)!) && chars[0]!.codePointAt(0)! > 0x7f;
    const plainSymbol = (ch: string) => {
      const c = ch.codePointAt(0)!;
      if (c <= 0x7f) return '~+*<>|^&!=,'.includes(ch);
      return (
        !isIdFirst(c) &&
        !isIdRest(c) &&
        !OPENERS.has(ch) &&
        !CLOSERS.has(ch) &&
        !'«»⁻∑∏'.includes(ch) &&
        !/\s/u.test(ch) &&
        !/\p{C}/u.test(ch)
      );
    };
    if (chars.length === 0 || chars.length > 8 || (!singleLetter && !chars.every(plainSymbol)) || /\s/u.test(value))
      throw new Refusal(
        t,
        `the notation symbol ${JSON.stringify(t.value)}: only up to 8 symbol characters (no letters, quotes, brackets, \`-\`, \`/\`, \`:\`, \`#\`) or one letter-like character`,
      );
  }

  private optionalIn(): void {
    if (this.is(this.peek(), 'in')) {
      this.next();
      const after = this.peek();
      if (!after) throw new Refusal(undefined, '`in` with nothing after it');
    }
  }

  private openArgs(open: Token): void {
    let names = 0;
    if (this.is(this.peek(), 'scoped')) this.next();
    for (;;) {
      const t = this.peek();
      if (this.plainIdent(t)) {
        if (t!.text === 'in') break;
        if (this.policy.knownNamespace && !this.policy.knownNamespace(t!.text)) {
          throw new Refusal(t, `\`open ${t!.text}\`: the library has no namespace \`${t!.text}\``);
        }
        this.next();
        names++;
        continue;
      }
      if (names > 0 && t?.kind === 'symbol' && t.text === '(') {
        // `open Foo (bar baz)`: names only.
        this.next();
        while (this.plainIdent(this.peek())) this.next();
        if (!this.is(this.peek(), ')')) throw new Refusal(this.peek() ?? open, '`open X (…)` takes names only');
        this.next();
        continue;
      }
      if (names > 0 && this.is(t, 'hiding')) {
        this.next();
        while (this.plainIdent(this.peek())) this.next();
        continue;
      }
      break;
    }
    if (names === 0) throw new Refusal(open, '`open` without a namespace');
  }

  private setOption(keyword: Token): void {
    const name = this.next();
    if (!name || name.kind !== 'ident') throw new Refusal(name ?? keyword, '`set_option` without an option name');
    if (!this.policy.allowedOptions.includes(name.text)) {
      throw new Refusal(name, `\`set_option ${name.text}\` (allowed: ${this.policy.allowedOptions.join(', ')})`);
    }
    const value = this.next();
    const bound = OPTION_BOUNDS.get(name.text);
    if (bound !== undefined) {
      if (!value || value.kind !== 'number' || !/^\d+$/.test(value.text))
        throw new Refusal(value ?? name, `\`${name.text}\` takes a number`);
      const n = Number(value.text);
      // Bounded: no limit (0) or a huge one becomes the cap, in the text Lean sees.
      if (n === 0 || n > bound) this.pieces[this.index.get(value)!] = String(bound);
      return;
    }
    if (!value || value.kind !== 'ident' || (value.text !== 'true' && value.text !== 'false')) {
      throw new Refusal(value ?? name, `\`${name.text}\` takes \`true\` or \`false\``);
    }
  }

  /** A name that is not a command word or an escape hatch. */
  private plainIdent(t: Token | undefined): boolean {
    return t !== undefined && t.kind === 'ident' && !this.isKeyword(t.text) && !ESCAPE_HATCHES.has(t.text) && !THEOREM_KEYWORDS.has(t.text);
  }

  private declaration(): void {
    const first = this.p;
    const preamble = this.textBetween(this.importEnd, first).trim();
    this.modifiers(false);
    const kw = this.next();
    if (!kw || kw.kind !== 'ident' || !THEOREM_KEYWORDS.has(kw.text)) throw new Refusal(kw, 'only a theorem, lemma or example is checked');
    let name: string | undefined;
    if (kw.text !== 'example') {
      const n = this.next();
      if (!this.plainIdent(n)) throw new Refusal(n ?? kw, `\`${kw.text}\` needs a name`);
      name = n!.text;
    }
    const sigStart = this.p;
    // The signature: term tokens up to the `:=` at bracket depth 0.
    const state: TermState = { stack: [], tactics: [], bindings: [] };
    for (;;) {
      const t = this.peek();
      if (!t) {
        // An unclosed bracket swallows the `:=`: say so, rather than "no `:=`".
        this.closeTerm(state, kw);
        throw new Refusal(kw, 'the statement has no `:=`; end it with `:= by sorry`');
      }
      if (state.stack.length === 0 && t.kind === 'symbol' && t.text === ':=' && state.bindings.at(-1) !== 0) break;
      this.termToken(t, state);
      this.next();
    }
    const signature = this.textBetween(sigStart, this.p).trim();
    const assign = this.next()!;
    // The proof: only `sorry` (and, at the REPL gate, driftline's own scripts).
    const proofStart = this.p;
    while (this.peek() && !(this.is(this.peek(), 'end') && this.opened > 0) && !this.proofEnds(this.peek()!)) this.next();
    const proof = this.sig.slice(proofStart, this.p);
    this.checkProof(assign, proof);
    this.declarations++;
    if (this.mode !== 'repl' && this.mode !== 'header') {
      this.statement = {
        imports: [],
        preamble,
        definitions: [...this.definitionNames],
        keyword: kw.text as ScreenedStatement['keyword'],
        ...(name ? { name } : {}),
        signature,
      };
    }
  }

  /** At the REPL gate a proof ends where the next command of ours begins. */
  private proofEnds(t: Token): boolean {
    if (this.mode !== 'repl') return false;
    return (
      this.declarationKeyword() !== undefined ||
      this.notationStart() ||
      t.kind === 'hash' ||
      (t.kind === 'ident' && ['open', 'set_option', 'universe', 'variable', 'namespace', 'section'].includes(t.text))
    );
  }

  private checkProof(assign: Token, proof: Token[]): void {
    const texts = proof.map((t) => t.text);
    const same = (a: readonly string[]) => a.length === texts.length && a.every((x, i) => x === texts[i]);
    const allowed: readonly string[][] =
      this.mode === 'repl'
        ? TRUSTED_PROOFS
        : this.mode === 'gold'
          ? [['sorry'], ['by', 'sorry'], ['by'], []]
          : [['sorry'], ['by', 'sorry']];
    if (allowed.some(same)) return;
    for (const t of proof)
      if (t.kind === 'hash' || t.kind === 'bad' || (t.kind === 'ident' && ESCAPE_HATCHES.has(t.text))) throw this.unexpected(t);
    const sorryPrefix = texts[0] === 'sorry' ? 1 : texts[0] === 'by' && texts[1] === 'sorry' ? 2 : 0;
    if (sorryPrefix > 0) {
      const extra = proof[sorryPrefix]!;
      throw new Refusal(extra, `anything after the statement: nothing may follow \`:= by sorry\` (found \`${extra.text}\`)`);
    }
    throw new Refusal(proof[0] ?? assign, 'a proof; the statement must end in `:= by sorry`');
  }

  /** A bracketed binder group of `variable`. */
  private group(): void {
    const state: TermState = { stack: [], tactics: [], bindings: [] };
    do {
      const t = this.peek();
      if (!t) this.closeTerm(state, undefined);
      this.termToken(t!, state);
      this.next();
    } while (state.stack.length > 0);
  }

  /** At the end of a term: every bracket closed. */
  private closeTerm(state: TermState, at: Token | undefined): void {
    const open = state.stack[state.stack.length - 1];
    if (open) throw new Refusal(open, `\`${open.text}\` is never closed`);
    void at;
  }

  /** One token of a term: refuses what can start a command or run code; tracks brackets and
   * `by` blocks. */
  private termToken(t: Token, state: TermState): void {
    const block = state.tactics[state.tactics.length - 1];
    if (block && state.stack.length < block.depth) state.tactics.pop();
    const inTactics = state.tactics.length > 0;
    if (t.kind === 'bad') throw new Refusal(t, t.problem ?? 'text Lean may read differently');
    if (t.kind === 'hash' && !this.cardinalityNotation(t)) {
      throw new Refusal(
        t,
        HASH_WHY.get(t.text) ??
          `\`${t.text}\`: \`#\` words start commands (for a cardinality write \`#(${t.text.slice(1)})\` or \`Finset.card ${t.text.slice(1)}\`)`,
      );
    }
    if (t.kind === 'doc') throw new Refusal(t, 'a doc comment inside a statement');
    if (t.kind === 'symbol' && t.text === '@[') throw new Refusal(t, 'attributes inside a term');
    const lineStart = this.lineBreakBefore(t);
    for (;;) {
      const last = state.tactics[state.tactics.length - 1];
      if (!last || !lineStart || last.expectTactic || last.column === undefined || state.stack.length !== last.depth) break;
      if (positionAt(this.code, t.start).column >= last.column) break;
      state.tactics.pop();
    }
    const top = state.tactics[state.tactics.length - 1];
    const tacticStart = top !== undefined && (top.expectTactic || (lineStart && state.stack.length === top.depth));
    if (top && tacticStart && top.column === undefined) top.column = positionAt(this.code, t.start).column;
    if (top) top.expectTactic = false;
    if (t.kind === 'ident') {
      // `open X in term` and `set_option o v in term` are terms too.
      if (t.text === 'open' && !tacticStart) {
        this.next();
        this.openArgs(t);
        if (!this.is(this.peek(), 'in')) throw new Refusal(this.peek() ?? t, '`open` inside a term must be `open … in`');
        return;
      }
      if (t.text === 'set_option' && !tacticStart) {
        this.next();
        this.setOption(t);
        if (!this.is(this.peek(), 'in')) throw new Refusal(this.peek() ?? t, '`set_option` inside a term must be `set_option … in`');
        return;
      }
      const hatch =
        ESCAPE_HATCHES.get(t.text) ??
        t.text
          .split('.')
          .map((part) => ESCAPE_HATCHES.get(part))
          .find(Boolean);
      if (hatch) throw new Refusal(t, hatch);
      if (t.text.split('.').some((part) => part.startsWith('unsafe'))) throw new Refusal(t, '`unsafe` code is not allowed');
      if (this.isKeyword(t.text) || THEOREM_KEYWORDS.has(t.text))
        throw new Refusal(t, `\`${t.text}\` starts a command and cannot appear inside a term`);
      const after = this.tokens[this.index.get(t)! + 1];
      if (after?.kind === 'symbol' && after.text === '%') throw new Refusal(t, `\`${t.text}%\` runs an elaborator of its own`);
      if (tacticStart && !STATEMENT_TACTICS.has(t.text))
        throw new Refusal(t, `the tactic \`${t.text}\` is not one a statement may use (see engines/lean/tactic-names.ts)`);
      if (tacticStart && top) {
        top.lastTactic = t.text;
        if (TACTIC_COMBINATORS.has(t.text) && t.text !== 'first') top.expectTactic = true;
      }
      if ((t.text === 'let' || t.text === 'have') && !tacticStart) state.bindings.push(state.stack.length);
      if (t.text === 'by') {
        if (state.noTactics) throw new Refusal(t, state.noTactics);
        if (state.tactics.length >= SCREEN_LIMITS.maxDepth) throw new Refusal(t, 'tactic blocks nested too deep');
        state.tactics.push({ depth: state.stack.length, expectTactic: true });
      }
    }
    if (t.kind === 'symbol' && t.text === ':=' && state.bindings.at(-1) === state.stack.length) state.bindings.pop();
    if (t.kind === 'symbol' && t.text === '%' && this.code[t.start + 1] === '[')
      throw new Refusal(t, '`%[…]` runs an elaborator of its own');
    if (t.kind === 'number' && t.text.length > SCREEN_LIMITS.maxNumberDigits)
      throw new Refusal(t, `a number literal of ${t.text.length} digits`);
    if (inTactics && t.kind === 'symbol') this.tacticSymbol(t, state, tacticStart);
    if (t.kind === 'symbol') {
      const i = this.index.get(t)!;
      let run = 1;
      for (let k = i - 1; k >= 0 && run <= SCREEN_LIMITS.maxDepth; k--) {
        const prev = this.tokens[k]!;
        if (prev.kind === 'space') continue;
        if (prev.kind !== 'symbol' || prev.text !== t.text) break;
        run++;
      }
      if (run > SCREEN_LIMITS.maxDepth && !OPENERS.has(t.text) && !CLOSERS.has(t.text))
        throw new Refusal(t, `\`${t.text}\` repeated more than ${SCREEN_LIMITS.maxDepth} times`);
      if (OPENERS.has(t.text)) {
        state.stack.push(t);
        if (state.stack.length > SCREEN_LIMITS.maxDepth) throw new Refusal(t, `brackets nested more than ${SCREEN_LIMITS.maxDepth} deep`);
      } else if (CLOSERS.has(t.text)) {
        const open = state.stack.pop();
        if (open === undefined || OPENERS.get(open.text) !== t.text)
          throw new Refusal(
            t,
            `\`${t.text}\` does not close ${open ? `\`${open.text}\` (line ${positionAt(this.code, open.start).line})` : 'anything'}`,
          );
      }
    }
  }

  /** Inside a `by` block: separators start a new tactic; configurations are refused. */
  private tacticSymbol(t: Token, state: TermState, tacticStart: boolean): void {
    const top = state.tactics[state.tactics.length - 1]!;
    const next = this.tokens[this.index.get(t)! + 1];
    const nextSig = this.sig[this.p + 1];
    if (t.text === '(' && nextSig?.kind === 'ident' && this.is(this.sig[this.p + 2], ':='))
      throw new Refusal(t, `a tactic configuration \`(${nextSig.text} := …)\` is evaluated at elaboration and is not allowed`);
    if ((t.text === '+' || t.text === '-') && next?.kind === 'ident' && /\s/.test(this.code[t.start - 1] ?? ' '))
      throw new Refusal(t, `a tactic option switch \`${t.text}${next.text}\` is evaluated at elaboration and is not allowed`);
    if (t.text === ';' || t.text === '·' || ((t.text === '(' || t.text === '{') && tacticStart)) {
      top.expectTactic = true;
      // `(tacs)` and `{ tacs }` at a tactic's place are tactic blocks of their own.
      if (t.text !== ';' && t.text !== '·') state.tactics.push({ depth: state.stack.length + 1, expectTactic: true });
    }
    if (t.text === '>' && this.code.slice(t.start - 2, t.start) === '<;') top.expectTactic = true;
    if (t.text === '|' && top.lastTactic === 'first' && state.stack.length === top.depth) top.expectTactic = true;
    if (t.text === '>' && this.code[t.start - 1] === '=' && (top.lastTactic === 'case' || top.lastTactic === 'next'))
      top.expectTactic = true;
  }

  /** `#s`: Mathlib's cardinality notation glued to a short name. Lean reads the longest token
   * first, so it is a term only when no `#` command is a prefix of it; names of at most two
   * characters are accepted when none of the known ones is. */
  private cardinalityNotation(t: Token): boolean {
    if ([...t.text].length > 3) return false;
    const commands = [...HASH_COMMANDS.filter((c) => c.length > 2), ...[...this.keywords].filter((w) => w.startsWith('#'))];
    return !commands.some((c) => t.text.startsWith(c));
  }

  /** `#check @Name` and `#print Name`: the name tools' commands (REPL gate only). */
  private toolCommand(): boolean {
    const t = this.peek()!;
    if (t.kind !== 'hash' || (t.text !== '#check' && t.text !== '#print')) return false;
    this.next();
    if (t.text === '#check') {
      const at = this.next();
      if (!this.is(at, '@')) throw new Refusal(at ?? t, '`#check` is sent for `@name` only');
    }
    const name = this.next();
    if (!this.plainIdent(name)) throw new Refusal(name ?? t, `\`${t.text}\` takes one name`);
    const after = this.peek();
    if (after && after.kind !== 'hash' && !this.startsCommand(after) && this.declarationKeyword() === undefined)
      throw new Refusal(after, `\`${t.text}\` takes one name`);
    return true;
  }

  /** A quote token Lean may not have in its table (the header did not import the notation):
   * Lean would resume after a failed char literal; that place must be one it reads as we do. */
  checkQuoteFallbacks(): void {
    for (const t of this.tokens) {
      if (!t.quoteToken) continue;
      const r = fallbackResume(this.code, t);
      const problem = `\`${t.text}\` followed by text Lean reads differently when the notation is not imported`;
      if (r === undefined) throw new Refusal(t, problem);
      const at = this.tokens.find((k) => k.start <= r && r < k.start + k.text.length);
      if (!at || at.start === r || at.kind === 'space') continue;
      // Inside one of our names: whatever Lean reads from there on is a name made of a suffix
      // of ours, so every suffix that starts a name must be a plain one.
      const rest = this.code.slice(r, at.start + at.text.length);
      const restOk =
        at.kind === 'ident' &&
        !at.text.includes('«') &&
        [...rest].every((ch, j, all) => {
          if (!isIdFirst(ch.codePointAt(0)!)) return true;
          const word = all.slice(j).join('');
          return word.split('.').every((part) => part === '' || this.plainIdent({ ...at, text: part }));
        });
      if (!restOk && at.kind !== 'number') throw new Refusal(t, problem);
    }
  }
}

/** The text Lean sees for one token. */
function rebuilt(t: Token): string {
  switch (t.kind) {
    case 'space':
      return t.text.replace(/\r\n/g, '\n').replace(/\t/g, ' ');
    case 'comment':
    case 'doc':
      return t.text.replace(/[^\n]/g, ' ');
    case 'string':
      return canonicalLiteral(t.value ?? '', '"');
    case 'char':
      return canonicalLiteral(t.value ?? '', "'");
    default:
      return t.text;
  }
}

function run(code: string, policy: SafetyPolicy, mode: Mode): Screened<Parsed> {
  try {
    if (code.length > SCREEN_LIMITS.maxChars)
      throw new Refusal(undefined, `the text is ${code.length} characters long (limit ${SCREEN_LIMITS.maxChars})`);
    const tokens = tokenize(code);
    if (tokens.length > SCREEN_LIMITS.maxTokens)
      throw new Refusal(undefined, `the text has ${tokens.length} tokens (limit ${SCREEN_LIMITS.maxTokens})`);
    const parser = new Parser(code, tokens, policy, mode);
    parser.parse();
    // A lexical error anywhere is where Lean starts guessing: refused wherever the grammar
    // placed it, and so is a quote token whose fallback reading Lean might take.
    const badToken = tokens.find((t) => t.kind === 'bad');
    if (badToken) throw new Refusal(badToken, badToken.problem ?? 'text Lean may read differently');
    parser.checkQuoteFallbacks();
    return {
      ok: true,
      value: {
        pieces: parser.pieces,
        imports: parser.importModules,
        ...(parser.statement ? { statement: parser.statement } : {}),
      },
    };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const message = refusalMessage(code, error.token, error.reason);
    // The reason names the construct and where it is, for a reader of a list of refusals.
    const where = error.token ? ` (line ${message.line}, column ${message.column})` : '';
    return {
      ok: false,
      message,
      reason: `${error.reason}${where}`,
      line: message.line,
      column: message.column,
      ...(error.token ? { construct: error.token.text.slice(0, 80) } : {}),
    };
  }
}

/** Screens a statement from outside: definitions it needs, then one theorem, lemma or example
 * ending `:= by sorry`. `gold` also admits a gold statement whose proof is left out (`… := by`). */
export function screenStatement(
  code: string,
  policy: SafetyPolicy = DEFAULT_SAFETY_POLICY,
  options: { gold?: boolean } = {},
): Screened<ScreenedStatement> {
  const result = run(code, policy, options.gold ? 'gold' : 'statement');
  if (!result.ok) return result;
  return { ok: true, value: { ...result.value.statement!, imports: result.value.imports, text: result.value.pieces.join('') } };
}

/** Screens a check's header: imports from allowed roots, preamble commands and definitions. */
export function screenHeader(header: string, policy: SafetyPolicy = DEFAULT_SAFETY_POLICY): Screened<string> {
  const result = run(header, policy, 'header');
  return result.ok ? { ok: true, value: result.value.pieces.join('') } : result;
}

/** The gate in front of every REPL: the body of a check, which may also hold driftline's own
 * commands (the equivalence check's hypothesis and goals, the name tools' `#check`). */
export function screenReplInput(body: string, policy: SafetyPolicy = DEFAULT_SAFETY_POLICY): Screened<string> {
  const result = run(body, policy, 'repl');
  return result.ok ? { ok: true, value: result.value.pieces.join('') } : result;
}

/** The same gate on what driftline composes around a statement for a REPL (lean-source.ts's
 * header and body): the composition adds imports and lines, and is screened as it is sent.
 * Returns the first refusal, or undefined when both parts pass unchanged. */
export function screenCheckSource(
  source: { header: string; body: string },
  policy: SafetyPolicy = DEFAULT_SAFETY_POLICY,
): Extract<Screened<string>, { ok: false }> | undefined {
  const header = screenHeader(source.header, policy);
  if (!header.ok) return header;
  const body = screenReplInput(source.body, policy);
  if (!body.ok) return body;
  return undefined;
}

/**
 * Why `code` may not be sent to Lean, as a compiler-style error at the offending place; or
 * undefined when it is one allowed statement.
 */
export function unsafeStatementReason(code: string, policy: SafetyPolicy = DEFAULT_SAFETY_POLICY): LeanMessage | undefined {
  const screened = screenStatement(code, policy);
  return screened.ok ? undefined : screened.message;
}
