// Reading Lean source as text, without Lean: masking comments and strings, and finding the
// `:=` that ends a declaration's statement. The one scanner for the formalizer's reply
// (engines/llm/extract-lean.ts), the safety check and the equivalence check.

/**
 * Masks comments and string literals with spaces (newlines kept), so positions stay valid and
 * nothing inside them is mistaken for code. Lean block comments nest.
 */
export function maskCommentsAndStrings(text: string): string {
  const out = text.split('');
  let i = 0;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to && k < out.length; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  while (i < text.length) {
    if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (text.startsWith('/-', i)) {
      let depth = 0;
      let k = i;
      while (k < text.length) {
        if (text.startsWith('/-', k)) {
          depth++;
          k += 2;
        } else if (text.startsWith('-/', k)) {
          depth--;
          k += 2;
          if (depth === 0) break;
        } else k++;
      }
      blank(i, k);
      i = k;
    } else if (text[i] === '"') {
      let k = i + 1;
      while (k < text.length && text[k] !== '"') k += text[k] === '\\' ? 2 : 1;
      blank(i + 1, k);
      i = k + 1;
    } else i++;
  }
  return out.join('');
}

/**
 * Index of the first `:=` at bracket depth 0 at or after `from` in text whose comments and
 * strings are already masked, or -1. Binders such as `(n : ℕ := 0)` hold their own `:=`;
 * a stray closing bracket does not take the depth below 0.
 */
export function topLevelAssignMasked(masked: string, from = 0): number {
  let depth = 0;
  for (let i = from; i < masked.length; i++) {
    const c = masked[i]!;
    if ('([{⦃⟨'.includes(c)) depth++;
    else if (')]}⦄⟩'.includes(c)) depth = Math.max(0, depth - 1);
    else if (c === ':' && masked[i + 1] === '=' && depth === 0) return i;
  }
  return -1;
}

/** Index in `code` of the `:=` that ends the statement begun at or after `from`, or -1. */
export function topLevelAssign(code: string, from = 0): number {
  return topLevelAssignMasked(maskCommentsAndStrings(code), from);
}
