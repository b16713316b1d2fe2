// What the fake REPL "elaborates": scripted diagnostics for one command, positioned the way Lean
// positions them (1-based lines, 0-based columns counted in code points). Pure.

export type FakeSeverity = 'error' | 'warning' | 'info';

export interface FakeReplScript {
  /** Delay of a command that imports (a header). */
  headerDelayMs?: number;
  /** Delay of a command with declarations. */
  bodyDelayMs?: number;
  /** Names reported as `unknown identifier 'X'` wherever they occur as a whole identifier. */
  unknownIdentifiers?: string[];
  /** Names reported as `unknown constant 'X'`. */
  unknownConstants?: string[];
  /** Regex (source): every identifier that matches it entirely is an unknown identifier. */
  unknownIdentifierPattern?: string;
  /** Regexes (source): each match is reported as a type mismatch. */
  typeMismatchPatterns?: string[];
  /** Any other diagnostic: each match of `pattern` yields `message` at the match. */
  diagnostics?: { pattern: string; severity?: FakeSeverity; message: string }[];
  /** Modules that cannot be imported. */
  missingModules?: string[];
  /** A command containing this text makes the process die mid-reply. Default `CRASH_REPL`. */
  crashMarker?: string;
  /** A command containing this text is never answered. Default `HANG_REPL`. */
  hangMarker?: string;
  /** A command containing this text gets stray stdout lines before its reply. Default `NOISE_REPL`. */
  noiseMarker?: string;
  /** A command containing this text gets a forged reply before its real one: `{"env": N}` with
   * the number the real reply is about to get, or `forgedEnv`. Default `FORGE_REPL`. */
  forgeMarker?: string;
  forgedEnv?: number;
  /** Milliseconds between the forged reply and the real one (default 0: written together). */
  forgeGapMs?: number;
  /** A command containing this text leaves a task that writes a reply aimed at the next command
   * (`{"env": <next number>}`) `lingerDelayMs` (default 300) after its answer. Default `LINGER_REPL`. */
  lingerMarker?: string;
  lingerDelayMs?: number;
  /** A command containing this text gets an info message of `bigReplyChars` characters. Default `BIG_REPLY`. */
  bigReplyMarker?: string;
  bigReplyChars?: number;
  /** Megabytes allocated (and touched, so they are resident) per command and never freed: the
   * process's RSS grows the way a long-lived REPL's does as it accumulates environments. */
  memoryPerCommandMb?: number;
  /** A command containing this text crashes the process once per test (the first process to
   * see it; later processes answer normally). Needs `stateDir`. Default `CRASH_ONCE`. */
  crashOnceMarker?: string;
  /** Directory for state shared by all processes of one fake (set by the harness). */
  stateDir?: string;
  /** Where a command word driftline never sends (`#eval`, `run_cmd`, `unsafe`, …), read where
   * Lean reads code (leanVisibleCode), leaves a marker file, one per received command that has
   * one (set by the harness). */
  leakDir?: string;
  /** At start, try a TCP connection to this loopback port and log the result (`probe connect`). */
  probeConnectPort?: number;
  /** At start, try to create each of these files and log the result (`probe write`). */
  probeWrite?: string[];
  /** At start, try to read each of these files and log the result (`probe read`). */
  probeRead?: string[];
  /** After this many commands (driftline's confirmations not counted) the process forgets (once) every environment it made, so the
   * next command naming one gets `{"message": "Unknown environment."}` (a stale env id). */
  forgetEnvsAfter?: number;
  /** Name → type for `#check`/`#print`. Names not listed exist (type `Prop`) unless they are
   * unknown by the rules above, or `onlyKnownNames` is set. */
  knownNames?: Record<string, string>;
  onlyKnownNames?: boolean;
  /** Regex (source) on a goal type: such goals are provable without any hypothesis (a proof
   * that leans on a vacuous `True` stand-in still succeeds). See `declaredTypes`. */
  selfEvidentGoalPattern?: string;
  /** Regex (source): names that exist only once the text defines them (`abbrev answer …`,
   * `def f …`, `structure S …`), as a user's own definitions do: a use of one before its
   * definition, or with none in the command or its environment, is `unknown identifier`. */
  userNames?: string;
}

export interface Pos {
  line: number;
  column: number;
}

export interface FakeMessage {
  severity: FakeSeverity;
  pos: Pos;
  endPos: Pos | null;
  data: string;
}

export interface FakeSorry {
  pos: Pos;
  endPos: Pos;
  goal: string;
  proofState: number;
}

export interface Elaboration {
  messages: FakeMessage[];
  sorries: FakeSorry[];
  imports: string[];
  /** Theorems this command declared: name → statement type. */
  declared: Record<string, string>;
  /** Theorems this command declared: name → whole signature (binders and type). */
  signatures: Record<string, string>;
}

const IDENT_CHAR = /[\p{L}\p{N}_.'!?₀-₉]/u;

/** Position of string index `index` in `text`, as Lean reports it. */
export function positionAt(text: string, index: number): Pos {
  const before = text.slice(0, index);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: Array.from(before.slice(lineStart)).length };
}

function* occurrences(text: string, name: string): Generator<number> {
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + 1)) {
    const before = text[i - 1];
    const after = text[i + name.length];
    if ((before === undefined || !IDENT_CHAR.test(before)) && (after === undefined || !IDENT_CHAR.test(after))) yield i;
  }
}

function at(text: string, index: number, length: number, severity: FakeSeverity, data: string): FakeMessage {
  return { severity, pos: positionAt(text, index), endPos: positionAt(text, index + length), data };
}

const IMPORT = /^\s*import\s+(\S+)/;

/** Scripted elaboration of one command. `fresh`: run without `env` (imports allowed). */
export function elaborate(
  cmd: string,
  script: FakeReplScript,
  fresh: boolean,
  env: Record<string, string> = {},
  envSignatures: Record<string, string> = {},
): Elaboration {
  const messages: FakeMessage[] = [];
  const imports: string[] = [];
  const lines = cmd.split('\n');
  let offset = 0;
  let inHeader = true;
  for (const line of lines) {
    const match = IMPORT.exec(line);
    if (match && match[1]) {
      if (!fresh || !inHeader) {
        messages.push(
          at(
            cmd,
            offset + line.indexOf('import'),
            'import'.length,
            'error',
            "invalid 'import' command, it must be used in the beginning of the file",
          ),
        );
      } else {
        imports.push(match[1]);
      }
    } else if (line.trim() !== '' && !line.trim().startsWith('--')) {
      inHeader = false;
    }
    offset += line.length + 1;
  }
  // Like Lean's processHeader: an import failure is reported at the start of the header.
  for (const module of imports) {
    if (script.missingModules?.includes(module)) {
      messages.push({
        severity: 'error',
        pos: { line: 1, column: 0 },
        endPos: null,
        data: `unknown module prefix '${module.split('.')[0]}'\n\nNo directory '${module.split('.')[0]}' or file '${module}.olean' in the search path entries:\n/fake/.lake/build/lib/lean`,
      });
    }
  }

  for (const name of script.unknownIdentifiers ?? []) {
    for (const i of occurrences(cmd, name)) messages.push(at(cmd, i, name.length, 'error', `unknown identifier '${name}'`));
  }
  for (const name of script.unknownConstants ?? []) {
    for (const i of occurrences(cmd, name)) messages.push(at(cmd, i, name.length, 'error', `unknown constant '${name}'`));
  }
  if (script.unknownIdentifierPattern) {
    const pattern = new RegExp(`^(?:${script.unknownIdentifierPattern})$`, 'u');
    for (const m of cmd.matchAll(/[\p{L}_][\p{L}\p{N}_.'!?₀-₉]*/gu)) {
      if (pattern.test(m[0]) && !script.unknownIdentifiers?.includes(m[0])) {
        messages.push(at(cmd, m.index, m[0].length, 'error', `unknown identifier '${m[0]}'`));
      }
    }
  }
  for (const source of script.typeMismatchPatterns ?? []) {
    for (const m of cmd.matchAll(new RegExp(source, 'gu'))) {
      messages.push(
        at(
          cmd,
          m.index,
          m[0].length,
          'error',
          `type mismatch\n  ${m[0]}\nhas type\n  ℕ : Type\nbut is expected to have type\n  Prop : Type`,
        ),
      );
    }
  }
  for (const d of script.diagnostics ?? []) {
    for (const m of cmd.matchAll(new RegExp(d.pattern, 'gu')))
      messages.push(at(cmd, m.index, m[0].length, d.severity ?? 'error', d.message));
  }
  const bigMarker = script.bigReplyMarker ?? 'BIG_REPLY';
  if (cmd.includes(bigMarker)) {
    const size = script.bigReplyChars ?? 1_000_000;
    messages.push(at(cmd, cmd.indexOf(bigMarker), bigMarker.length, 'info', 'x'.repeat(size)));
  }

  messages.push(...undefinedUserNames(cmd, script, env));
  messages.push(...queries(cmd, script, env));
  const declared: Record<string, string> = {};
  const signatures: Record<string, string> = {};
  for (const d of declarations(cmd)) {
    const text = cmd.slice(d.start, d.end);
    const name = cmd.slice(d.namePos, d.namePos + d.nameLength);
    // As Lean: a name declared again (in this command or the environment) is an error.
    if (
      d.kind !== 'example' &&
      d.namePos !== d.start &&
      startsLine(cmd, d.start) &&
      (Object.hasOwn(declared, name) || Object.hasOwn(env, name))
    ) {
      messages.push(at(cmd, d.namePos, d.nameLength, 'error', `'${name}' has already been declared`));
    }
    const type = statementType(text);
    const signature = declarationSignature(text);
    // A proof leaning on an earlier theorem (in the env or this command) closes its goal only
    // when the goal is that theorem's statement up to renaming of bound variables (or the goal
    // is self-evident). So a vacuous `True` stand-in proves nothing real, and two statements
    // that differ in meaning are never found equivalent.
    const proof = text.slice(text.indexOf(':=') + 2);
    const selfEvident = Boolean(script.selfEvidentGoalPattern && new RegExp(script.selfEvidentGoalPattern, 'u').test(type));
    // A definition's body is a term, not a proof leaning on a theorem: only theorems are matched.
    for (const [hyp, hypType] of THEOREM_KINDS.has(d.kind) ? Object.entries({ ...env, ...declared }) : []) {
      if ([...occurrences(proof, hyp)].length === 0 || selfEvident || type === 'True') continue;
      const hypSignature = { ...envSignatures, ...signatures }[hyp];
      if (hypType !== 'True' && hypSignature !== undefined && sameUpToRenaming(hypSignature, signature)) continue;
      const i = d.start + text.indexOf(':=');
      messages.push(
        at(cmd, i, 2, 'error', `type mismatch\n  ${hyp}\nhas type\n  ${hypType} : Prop\nbut is expected to have type\n  ${type} : Prop`),
      );
    }
    declared[name] = type;
    signatures[name] = signature;
  }

  const sorries = findSorries(cmd);
  // Lean only warns about `sorry` when the declaration elaborated without errors.
  if (!messages.some((m) => m.severity === 'error')) messages.push(...sorryWarnings(cmd));
  messages.sort((a, b) => a.pos.line - b.pos.line || a.pos.column - b.pos.column);
  return { messages, sorries, imports, declared, signatures };
}

/** Whether `name` exists for `#check`/`#print`, and its type. */
export function lookupName(name: string, script: FakeReplScript, env: Record<string, string>): string | undefined {
  if (env[name] !== undefined) return env[name];
  // The name of driftline's confirmation exists nowhere (repl-process.ts).
  if (name.startsWith('driftline_confirm_')) return undefined;
  if (script.knownNames?.[name] !== undefined) return script.knownNames[name];
  if (script.onlyKnownNames) return undefined;
  if (script.unknownIdentifiers?.includes(name) || script.unknownConstants?.includes(name)) return undefined;
  if (script.unknownIdentifierPattern && new RegExp(`^(?:${script.unknownIdentifierPattern})$`, 'u').test(name)) return undefined;
  return 'Prop';
}

const QUERY = /^#(check|print)[ \t]+(axioms[ \t]+)?(@?)([^\s]+)/gmu;

/** `#check @N`, `#check N`, `#print N`, `#print axioms N`, answered as Lean does. */
function queries(cmd: string, script: FakeReplScript, env: Record<string, string>): FakeMessage[] {
  const out: FakeMessage[] = [];
  for (const m of cmd.matchAll(QUERY)) {
    const [, kind, axioms, , name = ''] = m;
    const nameAt = m.index + m[0].length - name.length;
    const type = lookupName(name, script, env);
    if (type === undefined) {
      out.push(
        at(cmd, nameAt, name.length, 'error', kind === 'print' && !axioms ? `unknown constant '${name}'` : `unknown identifier '${name}'`),
      );
    } else if (axioms) {
      out.push(at(cmd, m.index, m[0].length, 'info', `'${name}' does not depend on any axioms`));
    } else if (kind === 'check') {
      out.push(at(cmd, m.index, m[0].length, 'info', `${name} : ${type}`));
    } else {
      out.push(at(cmd, m.index, m[0].length, 'info', `theorem ${name} : ${type} :=\nfun _ => sorry`));
    }
  }
  return out;
}

// Declaration keywords, as whole words (not a field such as `Foo.def`).
const DECLARATION = /(?<![.\p{L}\p{N}_'])\b(theorem|lemma|def|example|instance|abbrev|structure|inductive|class)\b(\s+([^\s:({[⦃]+))?/gu;
const THEOREM_KINDS = new Set(['theorem', 'lemma', 'example']);

/** Whether the declaration word at `index` starts its command: only modifiers before it on its line. */
function startsLine(cmd: string, index: number): boolean {
  const before = cmd.slice(cmd.lastIndexOf('\n', index - 1) + 1, index);
  return /^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*$/.test(before);
}

function declarations(cmd: string): { kind: string; start: number; end: number; namePos: number; nameLength: number }[] {
  const found = [...cmd.matchAll(DECLARATION)];
  return found.map((m, k) => {
    const hasName = m[1] !== 'example' && m[3] !== undefined && m[3] !== 'where';
    const namePos = hasName ? m.index + m[0].length - (m[3] ?? '').length : m.index;
    return {
      kind: m[1]!,
      start: m.index,
      end: found[k + 1]?.index ?? cmd.length,
      namePos,
      nameLength: hasName ? (m[3] ?? '').length : (m[1] ?? '').length,
    };
  });
}

/** The user's own names (`userNames`) used where nothing defines them yet, as Lean reports them:
 * definitions elaborate in order, so a use before the definition is unknown too. */
function undefinedUserNames(cmd: string, script: FakeReplScript, env: Record<string, string>): FakeMessage[] {
  if (!script.userNames) return [];
  const pattern = new RegExp(`^(?:${script.userNames})$`, 'u');
  const definedAt = new Map<string, number>();
  for (const d of declarations(cmd)) {
    if (d.kind === 'example' || d.kind === 'instance') continue;
    const name = cmd.slice(d.namePos, d.namePos + d.nameLength);
    if (!definedAt.has(name)) definedAt.set(name, d.namePos);
  }
  const out: FakeMessage[] = [];
  for (const m of cmd.matchAll(/[\p{L}_][\p{L}\p{N}_'!?₀-₉]*/gu)) {
    if (!pattern.test(m[0]) || env[m[0]] !== undefined) continue;
    const at_ = definedAt.get(m[0]);
    if (at_ !== undefined && at_ <= m.index) continue;
    out.push(at(cmd, m.index, m[0].length, 'error', `unknown identifier '${m[0]}'`));
  }
  return out;
}

function sorryWarnings(cmd: string): FakeMessage[] {
  return declarations(cmd)
    .filter((d) => [...occurrences(cmd.slice(d.start, d.end), 'sorry')].length > 0)
    .map((d) => at(cmd, d.namePos, d.nameLength, 'warning', "declaration uses 'sorry'"));
}

function findSorries(cmd: string): FakeSorry[] {
  const result: FakeSorry[] = [];
  for (const d of declarations(cmd)) {
    const text = cmd.slice(d.start, d.end);
    const type = statementType(text);
    for (const i of occurrences(text, 'sorry')) {
      result.push({
        pos: positionAt(cmd, d.start + i),
        endPos: positionAt(cmd, d.start + i + 5),
        goal: `⊢ ${type}`,
        proofState: result.length,
      });
    }
  }
  return result;
}

/** The declaration's type: from the first `:` outside brackets to the `:=`. */
function statementType(declaration: string): string {
  let depth = 0;
  let colon = -1;
  for (let i = 0; i < declaration.length; i++) {
    const c = declaration[i];
    if (c === '(' || c === '[' || c === '{' || c === '⦃') depth++;
    else if (c === ')' || c === ']' || c === '}' || c === '⦄') depth--;
    else if (c === ':' && depth === 0) {
      if (declaration[i + 1] === '=') return colon >= 0 ? declaration.slice(colon + 1, i).trim() : '?';
      if (colon < 0) colon = i;
    }
  }
  return '?';
}

/** Binders and type of a declaration: what follows its name up to `:=`. */
function declarationSignature(declaration: string): string {
  const head = /^\s*(?:theorem|lemma|def|example|instance|abbrev|structure|inductive|class)\b(?:\s+[^\s:({[⦃]+)?/u.exec(declaration);
  const rest = declaration.slice(head ? head[0].length : 0);
  const assign = rest.indexOf(':=');
  return (assign >= 0 ? rest.slice(0, assign) : rest).trim();
}

/** Notation Lean elaborates away: `a ≥ b` is `b ≤ a`, `a > b` is `b < a`, and `p.Prime` for a
 * natural-number binder `p` is `Nat.Prime p`. */
function elaborated(signature: string): string {
  let out = signature;
  const naturals = new Set<string>();
  for (const m of out.matchAll(/[({]([^(){}:]+):\s*ℕ\s*[)}]/gu)) for (const v of m[1]!.trim().split(/\s+/)) naturals.add(v);
  out = out.replace(/([\p{L}_][\p{L}\p{N}_']*)\.([A-Z][\p{L}\p{N}_']*)/gu, (all, v: string, f: string) =>
    naturals.has(v) ? `Nat.${f} ${v}` : all,
  );
  out = out.replace(/(\S+)\s*≥\s*(\S+)/gu, '$2 ≤ $1').replace(/(\S+)\s*>\s*(\S+)/gu, '$2 < $1');
  return out;
}

/** Whether two signatures are the same statement up to the names of their bound variables. */
export function sameUpToRenaming(a: string, b: string): boolean {
  return canonicalSignature(a) === canonicalSignature(b);
}

function canonicalSignature(signature: string): string {
  const text = elaborated(signature);
  // Binder names, in order: `(a b : T)`, `{x : T}`, `[inst : C]`, `⦃y : T⦄`, before the type's colon.
  const names: string[] = [];
  let depth = 0;
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if ('([{⦃'.includes(c)) {
      if (depth === 0) open = i;
      depth++;
    } else if (')]}⦄'.includes(c)) {
      depth--;
      if (depth === 0 && open >= 0) {
        const group = text.slice(open + 1, i);
        const colon = group.indexOf(':');
        if (colon > 0) names.push(...group.slice(0, colon).trim().split(/\s+/));
      }
    } else if (c === ':' && depth === 0) {
      break;
    }
  }
  let out = text;
  names.forEach((name, k) => {
    out = out.replace(
      new RegExp(`(?<![\\p{L}\\p{N}_.'!?₀-₉])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}_.'!?₀-₉])`, 'gu'),
      `#${k}`,
    );
  });
  return out
    .replace(/\s+/g, ' ')
    .replace(/\s*([()[\]{}⦃⦄:,])\s*/g, '$1')
    .trim();
}

/**
 * The command as Lean's tokenizer sees it, with comments, string literals, well-formed char
 * literals and «…» names blanked (positions kept). Written apart from driftline's lexer, so the
 * two cannot share a blind spot. Like Lean (Lean.Parser.Basic `charLitFnAux`), a quote at a
 * token start opens a char literal unless another quote follows; a char literal that does not
 * close after one character (or escape) is a parse error, and Lean resumes reading right after
 * the character where it failed: what follows is code again, even what a naive reader takes for
 * the inside of a string. Mathlib's quote tokens (`''`, `⁻¹'`, `∑'`, `∏'`) are read as tokens.
 */
export function leanVisibleCode(cmd: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  const idStart = /[\p{L}_]/u;
  const idRest = /[\p{L}\p{N}_'!?₀-₉ₐ-ₜᵢ-ᵪ]/u;
  let out = '';
  let i = 0;
  while (i < cmd.length) {
    const rest = cmd.slice(i);
    if (rest.startsWith('--')) {
      const end = cmd.indexOf('\n', i);
      const stop = end < 0 ? cmd.length : end;
      out += blank(cmd.slice(i, stop));
      i = stop;
    } else if (rest.startsWith('/-')) {
      let depth = 0;
      let k = i;
      do {
        if (cmd.startsWith('/-', k)) {
          depth++;
          k += 2;
        } else if (cmd.startsWith('-/', k)) {
          depth--;
          k += 2;
        } else k++;
      } while (depth > 0 && k < cmd.length);
      out += blank(cmd.slice(i, k));
      i = k;
    } else if (cmd[i] === '"') {
      let k = i + 1;
      while (k < cmd.length && cmd[k] !== '"') k += cmd[k] === '\\' ? 2 : 1;
      k = Math.min(cmd.length, k + 1);
      out += blank(cmd.slice(i, k));
      i = k;
    } else if (/^(''|⁻¹'|∑'|∏')/u.test(rest)) {
      const token = /^(''|⁻¹'|∑'|∏')/u.exec(rest)![0];
      out += token;
      i += token.length;
    } else if (cmd[i] === "'") {
      // One character or a simple escape, then a closing quote; else the error and resumption.
      const chars = Array.from(cmd.slice(i + 1, i + 12));
      const body = chars[0] === '\\' ? (chars[1] === 'x' ? 4 : chars[1] === 'u' ? 6 : 2) : 1;
      const closing = chars[body];
      const consumed = 1 + chars.slice(0, body).join('').length;
      if (closing === "'") {
        out += blank(cmd.slice(i, i + consumed + 1));
        i += consumed + 1;
      } else {
        const failedAt = i + consumed + (closing ?? '').length;
        out += blank(cmd.slice(i, failedAt));
        i = failedAt;
      }
    } else if (cmd[i] === '«') {
      const end = cmd.indexOf('»', i);
      const stop = end < 0 ? cmd.length : end + 1;
      out += blank(cmd.slice(i, stop));
      i = stop;
    } else if (/[0-9]/.test(cmd[i]!)) {
      // Lean's numberFnAux: a base prefix or an exponent with no digit is an error, and Lean
      // resumes right after it (`2einitialize` runs `initialize`).
      const m = /^(0[xX]([0-9a-fA-F]*)|0[bB]([01]*)|0[oO]([0-7]*)|[0-9]+(\.[0-9]*)?([eE][+-]?([0-9]*))?)/u.exec(rest)!;
      const broken = m[2] === '' || m[3] === '' || m[4] === '' || m[7] === '';
      out += broken ? blank(m[0]) : m[0];
      i += m[0].length;
    } else if (idStart.test(cmd[i]!)) {
      let k = i + 1;
      while (k < cmd.length && (idRest.test(cmd[k]!) || (cmd[k] === '.' && idStart.test(cmd[k + 1] ?? '')))) k++;
      out += cmd.slice(i, k);
      i = k;
    } else {
      const ch = String.fromCodePoint(cmd.codePointAt(i)!);
      out += ch;
      i += ch.length;
    }
  }
  return out;
}
