// Pulls the Lean statement out of a formalizer's free-text reply and normalizes it to a
// statement-only declaration ending in `:= by sorry` (the proof is never our job).
import { topLevelAssign } from '../lean/lean-text';

// Source only: a shared global RegExp carries `lastIndex` from one call into the next.
const DECLARATION_SOURCE =
  /^[ \t]*(?:@\[[^\]\n]*\][ \t]*\n?[ \t]*)?(?:(?:private|protected|noncomputable|nonrec)[ \t]+)*(?:theorem|lemma|example)\b/.source;
const declarations = () => new RegExp(DECLARATION_SOURCE, 'gm');

const FENCE = /```[ \t]*([\w-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g;

function hasDeclaration(text: string): boolean {
  return declarations().test(text);
}

// A line that starts a definition or a preamble command a statement may need (what the screen
// admits before the theorem; the screen still decides).
const DEFINITION_SOURCE =
  /^[ \t]*(?:@\[[^\]\n]*\][ \t]*\n?[ \t]*)?(?:(?:private|protected|noncomputable|local|scoped)[ \t]+)*(def|abbrev|structure|class|inductive|instance|notation|infixl?|infixr|prefix|postfix|open|variable|universe|set_option|namespace|section|end)\b[ \t]*([^\s:({[⦃]*)/
    .source;

/** The names a block defines (`def f`, `abbrev answer`, …); anonymous instances and preamble
 * commands name nothing. */
function definedNames(text: string): string[] {
  const named = new Set(['def', 'abbrev', 'structure', 'class', 'inductive', 'instance']);
  return [...text.matchAll(new RegExp(DEFINITION_SOURCE, 'gm'))].filter((m) => named.has(m[1]!) && m[2]).map((m) => m[2]!);
}

function hasDefinitions(text: string): boolean {
  return new RegExp(DEFINITION_SOURCE, 'm').test(text);
}

/**
 * The code to work on: the last fenced Lean block holding a declaration, with the blocks right
 * before it that hold definitions and no declaration (a reply that gives its definitions in one
 * block and the theorem in the next), in order; else the whole reply. A definitions block the
 * later blocks repeat (the same text, or every name it defines defined again) is left out, so
 * nothing is declared twice.
 */
function pickCode(reply: string): string {
  const blocks = [...reply.matchAll(FENCE)]
    .filter((m) => ['', 'lean', 'lean4'].includes((m[1] ?? '').toLowerCase()))
    .map((m) => m[2] ?? '');
  let last = blocks.length - 1;
  while (last >= 0 && !hasDeclaration(blocks[last]!)) last--;
  if (last < 0) return reply;
  const picked = [blocks[last]!];
  for (let i = last - 1; i >= 0; i--) {
    const block = blocks[i]!;
    if (hasDeclaration(block) || !hasDefinitions(block)) break;
    const later = picked.join('\n');
    const names = definedNames(block);
    const laterNames = new Set(definedNames(later));
    const repeated = later.includes(block.trim()) || (names.length > 0 && names.every((n) => laterNames.has(n)));
    if (!repeated) picked.unshift(block);
  }
  return picked.length === 1 ? picked[0]! : picked.map((b) => b.trim()).join('\n\n');
}

export function extractLeanStatement(reply: string): string {
  const code = pickCode(reply).replace(/^[ \t]*import[ \t]+.*$\n?/gm, '');
  const starts = [...code.matchAll(declarations())].map((m) => m.index ?? 0);
  const start = starts.at(-1);
  if (start === undefined) {
    throw new Error(
      'no Lean `theorem`, `lemma` or `example` declaration was found; reply with one Lean ' + 'theorem statement ending in `:= by sorry`',
    );
  }
  // Everything before the last declaration (open, variable, namespace lines) stays: it can
  // matter for how the statement elaborates.
  // The proof starts at the first `:=` outside brackets, comments and strings.
  const cut = topLevelAssign(code, start);
  const head = (cut < 0 ? code : code.slice(0, cut)).trim();
  return `${head} := by sorry`;
}
