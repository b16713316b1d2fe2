// Reading Lean source as text, without Lean: masking comments and strings, and finding the
// `:=` that ends a declaration's statement, for the formalizer's reply
// (engines/llm/extract-lean.ts). The tokens are the Lean lexer's (lexer.ts).
import { tokenize } from './lexer';

/**
 * Masks comments and string and char literals with spaces (newlines kept), so positions stay
 * valid and nothing inside them is mistaken for code. The boundaries are the Lean lexer's
 * (lexer.ts), so `«--»` stays a name and `'"'` a character.
 */
export function maskCommentsAndStrings(text: string): string {
  return tokenize(text)
    .map((t) => {
      if (t.kind === 'comment' || t.kind === 'doc') return t.text.replace(/[^\n]/g, ' ');
      if (t.kind === 'string' || t.kind === 'char') return t.text[0] + t.text.slice(1, -1).replace(/[^\n]/g, ' ') + t.text.slice(-1);
      return t.text;
    })
    .join('');
}

/**
 * Index of the first `:=` at bracket depth 0 at or after `from` in text whose comments and
 * strings are already masked, or -1. Binders such as `(n : ℕ := 0)` hold their own `:=`, and so
 * do `let x := v` and `have h : p := v` in a statement's type; a stray closing bracket does not
 * take the depth below 0.
 */
export function topLevelAssignMasked(masked: string, from = 0): number {
  let depth = 0;
  const bindings: number[] = [];
  const identChar = /[\p{L}\p{N}_'!?.]/u;
  for (let i = from; i < masked.length; i++) {
    const c = masked[i]!;
    if ('([{⦃⟨'.includes(c)) depth++;
    else if (')]}⦄⟩'.includes(c)) depth = Math.max(0, depth - 1);
    else if ((c === 'l' || c === 'h') && !identChar.test(masked[i - 1] ?? ' ')) {
      const word = /^(let|have)(?![\p{L}\p{N}_'!?])/u.exec(masked.slice(i, i + 5));
      if (word) bindings.push(depth);
    } else if (c === ':' && masked[i + 1] === '=') {
      if (bindings.at(-1) === depth) bindings.pop();
      else if (depth === 0) return i;
      i++;
    }
  }
  return -1;
}

/** Index in `code` of the `:=` that ends the statement begun at or after `from`, or -1. */
export function topLevelAssign(code: string, from = 0): number {
  return topLevelAssignMasked(maskCommentsAndStrings(code), from);
}
