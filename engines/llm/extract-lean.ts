// Pulls the Lean statement out of a formalizer's free-text reply and normalizes it to a
// statement-only declaration ending in `:= by sorry` (the proof is never our job).

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

const OPEN = new Set(['(', '[', '{', '⦃', '⟨']);
const CLOSE = new Set([')', ']', '}', '⦄', '⟩']);

/**
 * Index of the `:=` that starts the proof: the first one outside brackets and comments
 * (binders such as `(n : ℕ := 0)` hold their own `:=`). -1 if there is none.
 */
function proofStart(code: string, from: number): number {
  let depth = 0;
  for (let i = from; i < code.length; i++) {
    const c = code[i]!;
    if (c === '-' && code[i + 1] === '-') {
      const nl = code.indexOf('\n', i);
      if (nl < 0) return -1;
      i = nl;
    } else if (c === '/' && code[i + 1] === '-') {
      const end = code.indexOf('-/', i + 2);
      if (end < 0) return -1;
      i = end + 1;
    } else if (OPEN.has(c)) depth++;
    else if (CLOSE.has(c)) depth = Math.max(0, depth - 1);
    else if (c === ':' && code[i + 1] === '=' && depth === 0) return i;
  }
  return -1;
}

export function extractLeanStatement(reply: string): string {
  const code = pickCode(reply).replace(/^[ \t]*import[ \t]+.*$\n?/gm, '');
  const starts = [...code.matchAll(declarations())].map((m) => m.index ?? 0);
  const start = starts.at(-1);
  if (start === undefined) {
    throw new Error(
      'no Lean `theorem`, `lemma` or `example` declaration was found; reply with one Lean ' +
        'theorem statement ending in `:= by sorry`',
    );
  }
  // Everything before the last declaration (open, variable, namespace lines) stays: it can
  // matter for how the statement elaborates.
  const cut = proofStart(code, start);
  const head = (cut < 0 ? code : code.slice(0, cut)).trim();
  return `${head} := by sorry`;
}
