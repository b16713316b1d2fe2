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

/** The code to work on: the last fenced block holding a declaration, else the whole reply. */
function pickCode(reply: string): string {
  const blocks = [...reply.matchAll(FENCE)]
    .filter((m) => ['', 'lean', 'lean4'].includes((m[1] ?? '').toLowerCase()))
    .map((m) => m[2] ?? '')
    .filter(hasDeclaration);
  return blocks.at(-1) ?? reply;
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
