// The screen: what may reach Lean. Lean runs arbitrary code at elaboration time (`#eval`,
// `run_cmd`, macros, `initialize`, native evaluation), and after a parse error it skips to the
// next token that starts a command and runs that. So the screen works on the tokens of a real
// Lean lexer (lexer.ts) and accepts a whitelist, not a blacklist:
//
//   statement := import* preamble* declaration end*
//   preamble  := open … [in] | set_option <listed option> <bounded value> [in] | universe …
//              | variable <binders> | namespace X | section [X] | noncomputable section | end [X]
//   declaration := [@[simp]] [private|protected] (theorem N | lemma N | example) <signature> := [by] sorry
//
// Inside the signature and binders every word that can start a command, every `#` word and
// every escape hatch to evaluation is refused, and nesting and length are capped. The text Lean
// then sees is rebuilt from the tokens (comments blanked, literals re-encoded, option values
// bounded), not forwarded. Three entry points, one grammar:
//   - screenStatement: a statement from outside (formalizer, repair, agent, API, benchmark gold);
//   - screenHeader: a check's header (imports and preamble only);
//   - screenReplInput: the one gate in front of every REPL (repl-pool.ts), which also admits the
//     few commands driftline writes itself (the equivalence check's proofs, `#check @name`).
// A refusal is a compiler-style message at the offending token, so the repair loop can act on it.
// Pure.
import type { LeanMessage } from '../../common/lean-types';
import { COMMAND_KEYWORD_PREFIXES, DEFAULT_COMMAND_KEYWORDS } from './command-keywords';
import { EQUIVALENCE_TACTICS } from './equivalence-tactics';
import { canonicalLiteral, positionAt, tokenize, type Token } from './lexer';

/** Version of the screen's rules, recorded with results so a reader knows what was screened. */
export const SCREEN_VERSION = 'lexer-whitelist-1';

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
  ],
};

/** Numeric options: Lean sees the value clamped into [1, max]; 0 (no limit) becomes max. */
const OPTION_BOUNDS: Record<string, number> = {
  maxHeartbeats: 1_000_000,
  'synthInstance.maxHeartbeats': 1_000_000,
  maxRecDepth: 8_192,
};
export const MAX_HEARTBEATS = OPTION_BOUNDS.maxHeartbeats!;

/** Caps: no theorem statement needs more, and past them Lean's parser is the risk. */
export const SCREEN_LIMITS = { maxChars: 30_000, maxTokens: 6_000, maxDepth: 64, maxNumberDigits: 400, maxDeclarations: 3 } as const;

const DEFAULT_KEYWORDS = new Set(DEFAULT_COMMAND_KEYWORDS);

/** Words refused anywhere in a term, each with why: they evaluate code or swap it in. */
const ESCAPE_HATCHES: Record<string, string> = {
  run_tac: '`run_tac` runs code',
  run_cmd: '`run_cmd` runs code',
  run_elab: '`run_elab` runs code',
  run_meta: '`run_meta` runs code',
  by_elab: '`by_elab` runs code',
  native_decide: '`native_decide` compiles and runs code',
  native: 'native evaluation (`native := true`, `+native`) compiles and runs code',
  ofReduceBool: '`Lean.ofReduceBool` makes the kernel run compiled code',
  ofReduceNat: '`Lean.ofReduceNat` makes the kernel run compiled code',
  reduceBool: '`Lean.reduceBool` makes the kernel run compiled code',
  reduceNat: '`Lean.reduceNat` makes the kernel run compiled code',
  implemented_by: '`@[implemented_by]` swaps in other code',
  extern: '`@[extern]` calls foreign code',
  plausible: '`plausible` compiles and runs code',
  slim_check: '`slim_check` compiles and runs code',
  dbg_trace: '`dbg_trace` runs code',
  dbgTrace: '`dbgTrace` runs code',
  axiom: 'new axioms are not allowed: they would make any statement provable',
  initialize: '`initialize` runs code when the file is imported',
  elab: 'defining elaborators is not allowed',
  macro: 'defining macros is not allowed',
  syntax: 'defining syntax is not allowed',
  notation: 'defining notation is not allowed',
};

/** Why a `#` command is refused (any other `#` word: not the statement). */
const HASH_WHY: Record<string, string> = {
  '#eval': '`#eval` runs code',
  '#eval!': '`#eval!` runs code',
  '#exit': '`#exit` stops the file',
};

/** `#` commands of Lean core, Batteries and Mathlib (a library's dump adds its own). */
// prettier-ignore
const HASH_COMMANDS = [
  '#eval', '#eval!', '#check', '#check_failure', '#print', '#reduce', '#synth', '#exit', '#guard', '#guard_msgs', '#guard_expr',
  '#help', '#lint', '#find', '#simp', '#norm_num', '#conv', '#whnf', '#whnfR', '#leansearch', '#loogle', '#moogle', '#html',
  '#test', '#sample', '#explode', '#min_imports', '#count_heartbeats', '#time', '#find_home', '#kind', '#where', '#version',
  '#long_names', '#long_instances', '#list_linters', '#instances', '#check_tactic', '#check_simp', '#redundant_imports',
  '#adaptation_note', '#discr_tree_key', '#discr_tree_simp_key', '#import_path', '#parse', '#trans_imports', '#widget',
  '#info_trees', '#show_unused', '#push_neg', '#unfold?', '#lift_lets', '#defeq_abuse',
];

const DECLARATION_KEYWORDS = new Set(['theorem', 'lemma', 'example']);
const MODIFIERS = new Set(['private', 'protected']);
const ALLOWED_ATTRIBUTES = new Set(['simp']);
const OPENERS: Record<string, string> = { '(': ')', '[': ']', '{': '}', '⦃': '⦄', '⟨': '⟩', '⟦': '⟧', '⦋': '⦌' };
const CLOSERS = new Set(Object.values(OPENERS));

export interface ScreenedStatement {
  /** The text Lean is sent, rebuilt from the tokens: comments blanked (line breaks kept, so
   * Lean's positions are the input's), literals re-encoded, option values bounded. */
  text: string;
  imports: string[];
  /** The rebuilt commands before the declaration, imports left out. */
  preamble: string;
  keyword: 'theorem' | 'lemma' | 'example';
  name?: string;
  /** The rebuilt binders and type: what follows the name up to the `:=`. */
  signature: string;
}

export type Screened<T> = { ok: true; value: T } | { ok: false; message: LeanMessage; reason: string };

class Refusal extends Error {
  constructor(
    readonly token: Token | undefined,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const ADVICE = 'Write one theorem statement ending in `:= by sorry`, with only `open` lines (and allowed `set_option`s) before it.';

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

class Parser {
  private readonly sig: Token[];
  private readonly index = new Map<Token, number>();
  private p = 0;
  private readonly keywords: ReadonlySet<string>;
  /** Per token, the text Lean is sent. */
  readonly pieces: string[];
  private opened = 0;
  private declarations = 0;
  private importsDone = false;
  private importEnd = 0;
  readonly importModules: string[] = [];
  statement?: Omit<ScreenedStatement, 'text'>;

  constructor(
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
    return t.kind === 'ident' && this.isKeyword(t.text);
  }

  private isKeyword(word: string): boolean {
    return this.keywords.has(word) || COMMAND_KEYWORD_PREFIXES.some((p) => word.startsWith(p));
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
      if (this.declarationStart()) {
        if (this.mode === 'header') throw new Refusal(t, 'a declaration in a header (a header holds imports and `open` lines only)');
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
    if (t.kind === 'hash') return new Refusal(t, HASH_WHY[t.text] ?? `\`${t.text}\`: commands other than the statement are not checked`);
    if (t.kind === 'ident' && ESCAPE_HATCHES[t.text]) return new Refusal(t, ESCAPE_HATCHES[t.text]!);
    if (this.startsCommand(t)) {
      if (this.declarations > 0 && this.mode !== 'repl') return new Refusal(t, `anything after the statement (\`${t.text}\`)`);
      return new Refusal(t, `\`${t.text}\`: only a theorem, lemma or example is checked, never other declarations or commands`);
    }
    if (this.declarations > 0 && this.mode !== 'repl') return new Refusal(t, `anything after the statement (\`${t.text}\`)`);
    return new Refusal(t, 'text outside any command');
  }

  private imports(): void {
    this.next();
    let count = 0;
    while (this.peek()?.kind === 'ident' && !this.startsCommand(this.peek())) {
      const m = this.next()!;
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
        while (this.peek()?.kind === 'symbol' && OPENERS[this.peek()!.text] && this.peek()!.text !== '⟨') {
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
        if (this.plainIdent(this.peek())) this.next();
        this.opened++;
        return true;
      case 'def':
      case 'abbrev':
        if (!this.definitionsAllowed()) return false;
        this.localDefinition();
        return true;
      case 'noncomputable':
        if ((this.is(this.peek(1), 'def') || this.is(this.peek(1), 'abbrev')) && this.definitionsAllowed()) {
          this.next();
          this.localDefinition();
          return true;
        }
        if (!this.is(this.peek(1), 'section')) return false;
        this.next();
        this.next();
        if (this.plainIdent(this.peek())) this.next();
        this.opened++;
        return true;
      case 'end':
        if (this.opened === 0) throw new Refusal(t, '`end` without a `namespace` or `section`');
        this.next();
        if (this.plainIdent(this.peek())) this.next();
        this.opened--;
        return true;
      default:
        return false;
    }
  }

  /** Benchmark headers and gold statements carry the local definitions their statement uses
   * (ProofNet's `def g (n : ℕ) : ℝ := …`); a formalizer's statement never does. */
  private definitionsAllowed(): boolean {
    // Headers carry them to Lean; a gold statement's own are screened but, at the REPL gate,
    // a body is only statements and driftline's own commands.
    return this.mode === 'header' || this.mode === 'gold';
  }

  /** `def N binders [: type] := term` (or `| pattern => term` alternatives): every token of it
   * is screened as a term; it ends where the next command starts. */
  private localDefinition(): void {
    const kw = this.next()!;
    const name = this.next();
    if (!this.plainIdent(name)) throw new Refusal(name ?? kw, `\`${kw.text}\` needs a name`);
    const stack: string[] = [];
    let body = 0;
    while (this.peek() && !(stack.length === 0 && this.startsCommand(this.peek()))) {
      this.termToken(this.peek()!, stack);
      this.next();
      body++;
    }
    if (stack.length > 0) throw new Refusal(this.peek() ?? kw, `\`${stack[stack.length - 1]}\` is never closed`);
    if (body === 0) throw new Refusal(kw, `\`${kw.text} ${name!.text}\` has no body`);
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
    const bound = OPTION_BOUNDS[name.text];
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
    return t !== undefined && t.kind === 'ident' && !this.isKeyword(t.text) && !ESCAPE_HATCHES[t.text] && !DECLARATION_KEYWORDS.has(t.text);
  }

  private declarationStart(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.kind === 'symbol' && t.text === '@[') return true;
    if (t.kind !== 'ident') return false;
    if (DECLARATION_KEYWORDS.has(t.text)) return true;
    let k = 0;
    while (this.peek(k)?.kind === 'ident' && MODIFIERS.has(this.peek(k)!.text)) k++;
    return k > 0 && this.peek(k)?.kind === 'ident' && DECLARATION_KEYWORDS.has(this.peek(k)!.text);
  }

  private declaration(): void {
    const first = this.p;
    const preamble = this.textBetween(this.importEnd, first).trim();
    if (this.is(this.peek(), '@[')) {
      const open = this.next()!;
      for (;;) {
        const attr = this.next();
        if (!attr || attr.kind !== 'ident') throw new Refusal(attr ?? open, 'an attribute list that is not closed');
        if (!ALLOWED_ATTRIBUTES.has(attr.text))
          throw new Refusal(attr, ESCAPE_HATCHES[attr.text] ?? `the attribute \`${attr.text}\` is not allowed`);
        const sep = this.next();
        if (this.is(sep, ']')) break;
        if (!this.is(sep, ',')) throw new Refusal(sep ?? attr, `the attribute \`${attr.text}\` takes no arguments here`);
      }
    }
    while (this.peek()?.kind === 'ident' && MODIFIERS.has(this.peek()!.text)) this.next();
    const kw = this.next();
    if (!kw || kw.kind !== 'ident' || !DECLARATION_KEYWORDS.has(kw.text))
      throw new Refusal(kw, 'only a theorem, lemma or example is checked');
    let name: string | undefined;
    if (kw.text !== 'example') {
      const n = this.next();
      if (!this.plainIdent(n)) throw new Refusal(n ?? kw, `\`${kw.text}\` needs a name`);
      name = n!.text;
    }
    const sigStart = this.p;
    // The signature: term tokens up to the `:=` at bracket depth 0.
    const stack: string[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) throw new Refusal(kw, 'the statement has no `:=`; end it with `:= by sorry`');
      if (stack.length === 0 && t.kind === 'symbol' && t.text === ':=') break;
      this.termToken(t, stack);
      this.next();
    }
    if (stack.length > 0) throw new Refusal(this.peek(), `\`${stack[stack.length - 1]}\` is never closed`);
    const signature = this.textBetween(sigStart, this.p).trim();
    const assign = this.next()!;
    // The proof: only `sorry` (and, at the REPL gate, driftline's own scripts).
    const proofStart = this.p;
    while (this.peek() && !(this.is(this.peek(), 'end') && this.opened > 0) && !this.proofEnds(this.peek()!)) this.next();
    const proof = this.sig.slice(proofStart, this.p);
    this.checkProof(assign, proof);
    this.declarations++;
    if (this.mode !== 'repl' && this.mode !== 'header') {
      this.statement = { imports: [], preamble, keyword: kw.text as ScreenedStatement['keyword'], ...(name ? { name } : {}), signature };
    }
  }

  /** At the REPL gate a proof ends where the next command of ours begins. */
  private proofEnds(t: Token): boolean {
    if (this.mode !== 'repl') return false;
    return (
      this.declarationStart() ||
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
      if (t.kind === 'hash' || t.kind === 'bad' || (t.kind === 'ident' && ESCAPE_HATCHES[t.text])) throw this.unexpected(t);
    const sorryPrefix = texts[0] === 'sorry' ? 1 : texts[0] === 'by' && texts[1] === 'sorry' ? 2 : 0;
    if (sorryPrefix > 0) {
      const extra = proof[sorryPrefix]!;
      throw new Refusal(extra, `anything after the statement: nothing may follow \`:= by sorry\` (found \`${extra.text}\`)`);
    }
    throw new Refusal(proof[0] ?? assign, 'a proof; the statement must end in `:= by sorry`');
  }

  /** A bracketed binder group of `variable`. */
  private group(): void {
    const stack: string[] = [];
    do {
      const t = this.peek();
      if (!t) throw new Refusal(undefined, 'a binder that is never closed');
      this.termToken(t, stack);
      this.next();
    } while (stack.length > 0);
  }

  /** One token of a term: refuses what can start a command or run code; tracks brackets. */
  private termToken(t: Token, stack: string[]): void {
    if (t.kind === 'bad') throw new Refusal(t, t.problem ?? 'text Lean may read differently');
    if (t.kind === 'hash' && !this.cardinalityNotation(t)) {
      throw new Refusal(
        t,
        HASH_WHY[t.text] ??
          `\`${t.text}\`: \`#\` words start commands (for a cardinality write \`#(${t.text.slice(1)})\` or \`Finset.card ${t.text.slice(1)}\`)`,
      );
    }
    if (t.kind === 'doc') throw new Refusal(t, 'a doc comment inside a statement');
    if (t.kind === 'symbol' && t.text === '@[') throw new Refusal(t, 'attributes inside a statement');
    if (t.kind === 'ident') {
      const hatch =
        ESCAPE_HATCHES[t.text] ??
        t.text
          .split('.')
          .map((part) => ESCAPE_HATCHES[part])
          .find(Boolean);
      if (hatch) throw new Refusal(t, hatch);
      if (t.text.split('.').some((part) => part.startsWith('unsafe'))) throw new Refusal(t, '`unsafe` code is not allowed');
      if (this.isKeyword(t.text) || DECLARATION_KEYWORDS.has(t.text))
        throw new Refusal(t, `\`${t.text}\` starts a command and cannot appear inside a statement`);
      const after = this.tokens[this.index.get(t)! + 1];
      if (after?.kind === 'symbol' && after.text === '%') throw new Refusal(t, `\`${t.text}%\` runs an elaborator of its own`);
    }
    if (t.kind === 'string' && /[{}]/.test(t.value ?? '')) throw new Refusal(t, 'braces inside a string literal (interpolation runs code)');
    if (t.kind === 'number' && t.text.length > SCREEN_LIMITS.maxNumberDigits)
      throw new Refusal(t, `a number literal of ${t.text.length} digits`);
    if (t.kind === 'symbol') {
      const i = this.index.get(t)!;
      let run = 1;
      for (let k = i - 1; k >= 0 && run <= SCREEN_LIMITS.maxDepth; k--) {
        const prev = this.tokens[k]!;
        if (prev.kind === 'space') continue;
        if (prev.kind !== 'symbol' || prev.text !== t.text) break;
        run++;
      }
      if (run > SCREEN_LIMITS.maxDepth && !OPENERS[t.text] && !CLOSERS.has(t.text))
        throw new Refusal(t, `\`${t.text}\` repeated more than ${SCREEN_LIMITS.maxDepth} times`);
      if (OPENERS[t.text]) {
        stack.push(t.text);
        if (stack.length > SCREEN_LIMITS.maxDepth) throw new Refusal(t, `brackets nested more than ${SCREEN_LIMITS.maxDepth} deep`);
      } else if (CLOSERS.has(t.text)) {
        const open = stack.pop();
        if (open === undefined || OPENERS[open] !== t.text)
          throw new Refusal(t, `\`${t.text}\` does not close ${open ? `\`${open}\`` : 'anything'}`);
      }
    }
  }

  /** `#s`: Mathlib's cardinality notation glued to a short name. Lean reads the longest token
   * first, so it is a term only when no `#` command is a prefix of it; names of at most two
   * characters are accepted when none of the known ones is. */
  private cardinalityNotation(t: Token): boolean {
    if (t.text.length > 3) return false;
    const commands = [...HASH_COMMANDS, ...[...this.keywords].filter((w) => w.startsWith('#'))];
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
    if (after && after.kind !== 'hash' && !this.startsCommand(after) && !this.declarationStart())
      throw new Refusal(after, `\`${t.text}\` takes one name`);
    return true;
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
    const parser = new Parser(tokens, policy, mode);
    parser.parse();
    // Every token was placed by the grammar; a bad one anywhere is refused all the same.
    const badToken = tokens.find((t) => t.kind === 'bad');
    if (badToken) throw new Refusal(badToken, badToken.problem ?? 'text Lean may read differently');
    return {
      ok: true,
      value: { pieces: parser.pieces, imports: parser.importModules, ...(parser.statement ? { statement: parser.statement } : {}) },
    };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ok: false, message: refusalMessage(code, error.token, error.reason), reason: error.reason };
  }
}

/** Screens a statement from outside: one theorem, lemma or example ending `:= by sorry`.
 * `gold` also admits a gold statement whose proof is left out (`… := by`). */
export function screenStatement(
  code: string,
  policy: SafetyPolicy = DEFAULT_SAFETY_POLICY,
  options: { gold?: boolean } = {},
): Screened<ScreenedStatement> {
  const result = run(code, policy, options.gold ? 'gold' : 'statement');
  if (!result.ok) return result;
  return { ok: true, value: { ...result.value.statement!, imports: result.value.imports, text: result.value.pieces.join('') } };
}

/** Screens a check's header: imports from allowed roots and preamble commands, nothing else. */
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

/**
 * Why `code` may not be sent to Lean, as a compiler-style error at the offending place; or
 * undefined when it is one allowed statement.
 */
export function unsafeStatementReason(code: string, policy: SafetyPolicy = DEFAULT_SAFETY_POLICY): LeanMessage | undefined {
  const screened = screenStatement(code, policy);
  return screened.ok ? undefined : screened.message;
}
