// What may reach Lean. The text is written by an LLM from text written by a user, and Lean
// runs arbitrary code at elaboration time (`#eval`, `run_cmd`, macros, `initialize`, FFI), so
// only one shape is accepted: allowed imports, a short preamble (`open`, allowed `set_option`,
// `universe`, `variable`, `namespace`/`section`), exactly one theorem/lemma/example whose
// proof is `sorry`, and nothing after it but the matching `end`s. The reason for a rejection
// comes back as a compiler-style message at the offending position, so the repair loop can
// act on it. Pure.
import type { LeanMessage } from '../../common/types';
import { maskCommentsAndStrings, topLevelAssignMasked } from './lean-text';

export interface SafetyPolicy {
  /** Import roots allowed (a root allows its submodules): `Mathlib` allows `Mathlib.Data.Nat`. */
  allowedImports: readonly string[];
  /** Options `set_option` may set. */
  allowedOptions: readonly string[];
}

export const DEFAULT_SAFETY_POLICY: SafetyPolicy = {
  allowedImports: ['Mathlib', 'ConNF', 'Batteries', 'Aesop', 'Qq', 'Init', 'Std'],
  allowedOptions: ['autoImplicit', 'relaxedAutoImplicit', 'maxHeartbeats', 'synthInstance.maxHeartbeats', 'maxRecDepth', 'pp.all', 'pp.proofs'],
};

/** Heartbeat options may not switch the limit off (0) or raise it past this. */
const MAX_HEARTBEATS = 1_000_000;

/** Words that run code or extend the language wherever they appear, with why. */
const FORBIDDEN_WORDS: Record<string, string> = {
  '#eval': '`#eval` runs code',
  '#exit': '`#exit` stops the file',
  '#reduce': 'commands other than the statement are not checked',
  '#print': 'commands other than the statement are not checked',
  '#check': 'commands other than the statement are not checked',
  '#synth': 'commands other than the statement are not checked',
  '#guard': 'commands other than the statement are not checked',
  '#guard_msgs': 'commands other than the statement are not checked',
  run_cmd: '`run_cmd` runs code',
  run_elab: '`run_elab` runs code',
  run_meta: '`run_meta` runs code',
  run_tac: '`run_tac` runs code',
  by_elab: '`by_elab` runs code',
  elab: 'defining elaborators is not allowed',
  elab_rules: 'defining elaborators is not allowed',
  macro: 'defining macros is not allowed',
  macro_rules: 'defining macros is not allowed',
  syntax: 'defining syntax is not allowed',
  declare_syntax_cat: 'defining syntax is not allowed',
  notation: 'defining notation is not allowed',
  infix: 'defining notation is not allowed',
  infixl: 'defining notation is not allowed',
  infixr: 'defining notation is not allowed',
  prefix: 'defining notation is not allowed',
  postfix: 'defining notation is not allowed',
  initialize: '`initialize` runs code when the file is imported',
  builtin_initialize: '`builtin_initialize` runs code',
  axiom: 'new axioms are not allowed: they would make any statement provable',
  unsafe: '`unsafe` code is not allowed',
  implemented_by: '`@[implemented_by]` swaps in other code',
  extern: '`@[extern]` calls foreign code',
  native_decide: '`native_decide` compiles and runs code',
};

const DECLARATION_KEYWORDS = ['theorem', 'lemma', 'example'];
const MODIFIERS = ['private', 'protected'];
const ALLOWED_ATTRIBUTES = ['simp'];
/** Commands that may appear before the statement. */
const PREAMBLE = ['import', 'open', 'set_option', 'universe', 'universes', 'variable', 'namespace', 'section', 'noncomputable', 'end'];
/** Any word that starts a command: a line starting with one begins a new command. */
const COMMAND_START =
  /^(?:@\[|#[a-z_]+|(?:import|open|set_option|universes?|variable|namespace|section|end|noncomputable|theorem|lemma|example|def|abbrev|instance|structure|class|inductive|axiom|opaque|private|protected|unsafe|partial|attribute|deriving|mutual|initialize|builtin_initialize|macro|macro_rules|syntax|elab|elab_rules|notation|infix|infixl|infixr|prefix|postfix|run_cmd|run_elab|run_meta|declare_syntax_cat|export|omit|include|alias|scoped|local)\b)/;

function positionAt(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: Array.from(before.slice(lineStart)).length };
}

function reject(text: string, index: number, length: number, reason: string): LeanMessage {
  const start = positionAt(text, index);
  const end = positionAt(text, index + length);
  return {
    severity: 'error',
    line: start.line,
    column: start.column,
    endLine: end.line,
    endColumn: end.column,
    text: `not allowed: ${reason}. Write one theorem statement ending in \`:= by sorry\`, with only \`open\` lines (and allowed \`set_option\`s) before it.`,
  };
}

interface Command {
  start: number;
  text: string;
  keyword: string;
}

const WORD_CHAR = /[\p{L}\p{N}_!?'.]/u;

/** Splits masked text into commands: a line whose first word starts a command begins one. */
function commands(masked: string): { leading: { start: number; text: string } | undefined; list: Command[] } {
  const list: Command[] = [];
  let leading: { start: number; text: string } | undefined;
  let offset = 0;
  for (const line of masked.split('\n')) {
    const indent = line.length - line.trimStart().length;
    const body = line.trimStart();
    const match = COMMAND_START.exec(body);
    if (match) {
      list.push({ start: offset + indent, text: body, keyword: match[0] });
    } else if (list.length > 0) {
      list[list.length - 1]!.text += `\n${line}`;
    } else if (body !== '') {
      leading ??= { start: offset + indent, text: body };
    }
    offset += line.length + 1;
  }
  return { leading, list };
}

function importAllowed(module: string, policy: SafetyPolicy): boolean {
  return policy.allowedImports.some((root) => module === root || module.startsWith(`${root}.`));
}

/**
 * Why `code` may not be sent to Lean, as a compiler-style error at the offending place; or
 * undefined when it is one allowed statement.
 */
export function unsafeStatementReason(code: string, policy: SafetyPolicy = DEFAULT_SAFETY_POLICY): LeanMessage | undefined {
  const masked = maskCommentsAndStrings(code);

  // 1. Words that run code or extend the language, anywhere (a signature can hide a `by` block).
  for (const m of masked.matchAll(/#?[\p{L}_][\p{L}\p{N}_!?']*/gu)) {
    const word = m[0];
    const before = masked[m.index - 1];
    if (before !== undefined && (WORD_CHAR.test(before) || before === '#')) continue;
    const why = FORBIDDEN_WORDS[word];
    if (why) return reject(code, m.index, word.length, why);
  }
  for (const m of masked.matchAll(/\+native\b/g)) return reject(code, m.index, m[0].length, '`decide +native` compiles and runs code');
  for (const m of masked.matchAll(/@\[([^\]]*)\]/g)) {
    for (const attr of m[1]!.split(',').map((a) => a.trim().split(/\s+/)[0] ?? '')) {
      if (!ALLOWED_ATTRIBUTES.includes(attr)) return reject(code, m.index, m[0].length, `the attribute \`${attr}\` is not allowed`);
    }
  }

  // 2. The shape: preamble, one declaration, then only `end`.
  const { leading, list } = commands(masked);
  if (leading) return reject(code, leading.start, leading.text.length, 'text outside any command');
  let declaration: Command | undefined;
  let opened = 0;
  for (const command of list) {
    const { keyword } = command;
    const words = command.text.trim().split(/\s+/);
    const isDeclaration =
      DECLARATION_KEYWORDS.includes(keyword) || keyword === '@[' || (MODIFIERS.includes(keyword) && DECLARATION_KEYWORDS.includes(words.find((w) => !MODIFIERS.includes(w)) ?? ''));
    if (declaration) {
      if (keyword === 'end' && opened > 0) {
        opened--;
        continue;
      }
      return reject(code, command.start, keyword.length, 'anything after the statement');
    }
    if (isDeclaration) {
      declaration = command;
      continue;
    }
    if (!PREAMBLE.includes(keyword)) return reject(code, command.start, keyword.length, `\`${keyword}\`: only a theorem, lemma or example is checked, never other declarations or commands`);
    if (keyword === 'import') {
      for (const module of words.slice(1)) {
        if (!importAllowed(module, policy)) {
          return reject(code, command.start, command.text.trimEnd().length, `importing \`${module}\` (allowed: ${policy.allowedImports.join(', ')})`);
        }
      }
    } else if (keyword === 'set_option') {
      const [, option = '', value = ''] = words;
      if (!policy.allowedOptions.includes(option)) {
        return reject(code, command.start, command.text.trimEnd().length, `\`set_option ${option}\` (allowed: ${policy.allowedOptions.join(', ')})`);
      }
      if (/maxHeartbeats$/.test(option) && (!/^\d+$/.test(value) || Number(value) === 0 || Number(value) > MAX_HEARTBEATS)) {
        return reject(code, command.start, command.text.trimEnd().length, `\`${option}\` must be between 1 and ${MAX_HEARTBEATS}`);
      }
      if (words.length > 3 && words[3] === 'in') continue;
    } else if (keyword === 'namespace' || keyword === 'section' || (keyword === 'noncomputable' && words[1] === 'section')) {
      opened++;
    } else if (keyword === 'noncomputable') {
      return reject(code, command.start, keyword.length, '`noncomputable` declarations are not statements');
    } else if (keyword === 'end') {
      if (opened === 0) return reject(code, command.start, keyword.length, '`end` without a `namespace` or `section`');
      opened--;
    }
  }
  if (!declaration) return reject(code, 0, 0, 'there is no theorem, lemma or example to check');

  // 3. The declaration's proof must be `sorry`: statements are checked here, not proofs.
  const assign = topLevelAssignMasked(declaration.text);
  if (assign < 0) return reject(code, declaration.start, declaration.keyword.length, 'the statement has no `:=`; end it with `:= by sorry`');
  const proof = declaration.text.slice(assign + 2).trim().replace(/\s+/g, ' ');
  if (!/^(by )?sorry$/.test(proof)) {
    return reject(code, declaration.start + assign, declaration.text.length - assign, 'a proof; the statement must end in `:= by sorry`');
  }
  return undefined;
}
