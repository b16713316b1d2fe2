// Pure logic around the Lean text of a check: what runs once as a cached header, what runs per
// statement, and how the REPL's messages map back onto the statement the LLM wrote.
//
// Header vs body. The REPL only accepts `import` in a fresh environment, and importing (Mathlib:
// seconds and gigabytes) is the expensive part, so the header is exactly the imports plus the
// library's configured preamble (e.g. `import ConNF` + `open ConNF`), run once per distinct
// header and reused through its `env`. A statement's own `open`/`set_option`/`universe`/
// `namespace` lines stay in the body: they are cheap, and the LLM varies them between attempts,
// which would otherwise re-import the library for every variant.
import type { CompileStatus, LeanMessage, Severity } from '../../common/lean-types';
import type { ReplMessage } from './repl-protocol';

export const DEFAULT_LIBRARY_HEADER = 'import Mathlib';

/** Longer statements are rejected before Lean: no theorem statement is this long, and a huge
 * input would only tie up the REPL. */
export const MAX_STATEMENT_CHARS = 100_000;

export interface ImportLine {
  module: string;
  /** 1-based line in the snippet. */
  line: number;
}

export interface SplitSnippet {
  imports: ImportLine[];
  /** Everything after the imports. Import lines are blanked rather than removed, so line n of
   * the body is line n of the snippet and Lean's positions need no shifting. */
  body: string;
}

export interface CheckSource {
  /** Run once in a fresh environment; its `env` is cached under this exact text. */
  header: string;
  /** Run in the header's environment; positions in it are positions in the statement. */
  body: string;
  /** Modules the statement imports that the library header does not already cover. */
  extraImports: ImportLine[];
}

// `import X`, and the module-system forms `public import X`, `meta import X`, `import all X`.
const IMPORT_LINE = /^\s*(?:(?:public|private|meta)\s+)*import\s+(?:all\s+|runtime\s+)?(.*?)\s*(?:--.*)?$/;

/**
 * Splits a snippet into its leading imports and the rest. The leading region is the lines
 * before the first command: blank lines, comments and `import` lines (Lean accepts imports
 * nowhere else).
 */
export function splitSnippet(source: string): SplitSnippet {
  const lines = source.split(/\r?\n/);
  const imports: ImportLine[] = [];
  let inBlockComment = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const trimmed = line.trim();
    if (inBlockComment) {
      if (trimmed.includes('-/')) inBlockComment = false;
      continue;
    }
    if (trimmed === '' || trimmed.startsWith('--')) continue;
    if (trimmed.startsWith('/-')) {
      inBlockComment = !trimmed.slice(2).includes('-/');
      continue;
    }
    const match = IMPORT_LINE.exec(line);
    if (!match) break;
    for (const module of (match[1] ?? '').split(/\s+/).filter(Boolean)) imports.push({ module, line: i + 1 });
    lines[i] = '';
  }
  return { imports, body: lines.join('\n') };
}

/**
 * The header and body that check `statement` against a library. Statement imports already
 * covered by the library header are dropped: an exact duplicate, or a submodule of a library
 * root the header imports whole (`Mathlib.Data.Nat.Prime` under `import Mathlib`). Keeping
 * them would make a new header, and a new multi-second import, for the same environment.
 */
export function buildCheckSource(statement: string, libraryHeader: string = DEFAULT_LIBRARY_HEADER): CheckSource {
  const library = splitSnippet(libraryHeader);
  const own = splitSnippet(statement);
  const covered = new Set(library.imports.map((i) => i.module));
  const roots = [...covered].filter((m) => !m.includes('.'));
  const extraImports: ImportLine[] = [];
  for (const imp of own.imports) {
    if (covered.has(imp.module) || roots.some((root) => imp.module.startsWith(`${root}.`))) continue;
    covered.add(imp.module);
    extraImports.push(imp);
  }
  const headerLines = [
    ...library.imports.map((i) => `import ${i.module}`),
    ...extraImports.map((i) => `import ${i.module}`),
    ...nonEmptyText(library.body),
  ];
  return { header: headerLines.join('\n'), body: own.body, extraImports };
}

function nonEmptyText(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === '' ? [] : [trimmed];
}

/** Why a statement cannot be checked at all, or undefined when it can be sent to Lean. */
export function invalidStatementReason(code: string): string | undefined {
  if (code.trim() === '') return 'The statement is empty: there is no Lean code to check.';
  if (code.length > MAX_STATEMENT_CHARS) {
    return `The statement is ${code.length} characters long (limit ${MAX_STATEMENT_CHARS}); it was not sent to Lean.`;
  }
  if (stripComments(splitSnippet(code).body).trim() === '') {
    return 'The statement has only imports and comments: there is no declaration to check.';
  }
  return undefined;
}

function stripComments(text: string): string {
  return text.replace(/\/-[\s\S]*?-\//g, '').replace(/--.*$/gm, '');
}

/** Body messages: the body keeps the statement's line numbers, so positions carry over. */
export function toLeanMessages(messages: readonly ReplMessage[] | undefined): LeanMessage[] {
  return (messages ?? []).map((m) => {
    const out: LeanMessage = {
      severity: toSeverity(m.severity),
      line: Math.max(1, m.pos.line),
      column: Math.max(0, m.pos.column),
      text: m.data.trimEnd(),
    };
    if (m.endPos) {
      out.endLine = Math.max(1, m.endPos.line);
      out.endColumn = Math.max(0, m.endPos.column);
    }
    return out;
  });
}

function toSeverity(severity: string): Severity {
  return severity === 'error' || severity === 'warning' ? severity : 'info';
}

/**
 * Errors from importing the header. Lean reports import failures at the start of the header,
 * so they are attributed by the module they name: to the statement's own import line when it
 * added that module (something the LLM can repair), else to the library header (configuration).
 */
export type HeaderFailure = { blame: 'statement'; messages: LeanMessage[] } | { blame: 'library'; text: string };

export function headerFailure(messages: readonly ReplMessage[] | undefined, source: CheckSource): HeaderFailure | undefined {
  const errors = (messages ?? []).filter((m) => m.severity === 'error');
  if (errors.length === 0) return undefined;
  const attributed: LeanMessage[] = [];
  for (const error of errors) {
    const culprit = source.extraImports.find((imp) => mentionsModule(error.data, imp.module));
    if (!culprit) {
      return { blame: 'library', text: errors.map((e) => e.data.trimEnd()).join('\n') };
    }
    attributed.push({ severity: 'error', line: culprit.line, column: 0, text: error.data.trimEnd() });
  }
  return { blame: 'statement', messages: attributed };
}

function mentionsModule(text: string, module: string): boolean {
  // "unknown module prefix 'Foo'" names only the first missing component.
  const prefixes = module.split('.').map((_, i, parts) => parts.slice(0, i + 1).join('.'));
  return text.includes(module) || prefixes.some((p) => text.includes(`'${p}'`));
}

/** `ok` unless Lean reported an error; warnings (the `sorry` one included) do not count. */
export function compileStatus(messages: readonly LeanMessage[]): Extract<CompileStatus, 'ok' | 'error'> {
  return messages.some((m) => m.severity === 'error') ? 'error' : 'ok';
}
