// A Lean 4 lexer: splits source text into the tokens Lean's own tokenizer (Lean.Parser.Basic:
// `whitespace`, `identFn`, `numberFnAux`, `strLitFnAux`, `charLitFnAux`) would see, so the
// screen (statement-safety.ts) decides on the same boundaries as Lean. It does not know the token table,
// so symbols come out one character at a time except the few multi-character ones the screen
// needs (`:=`, `@[`, `#word`). Anything Lean would read in a way this lexer does not model
// (raw strings, name literals and quotations, interpolated strings, odd whitespace, control
// characters, bad escapes) becomes a `bad` token, which the screen refuses. Pure.

export type TokenKind =
  | 'space' // ' ', '\n' (and '\t', '\r\n', which the screen normalises)
  | 'comment' // `-- …` and `/- … -/` (nested)
  | 'doc' // `/-- … -/` and `/-! … -/`: tokens to Lean, text to us
  | 'ident' // `Nat.succ`, `«weird name»`, `x'`, `h₁`
  | 'number'
  | 'string' // "…" with its decoded value
  | 'char' // 'a' with its decoded value
  | 'hash' // `#` and the word glued to it: `#eval`, `#check`, `#[`
  | 'symbol'
  | 'bad';

export interface Token {
  kind: TokenKind;
  /** The source text of the token. */
  text: string;
  /** Offset of the token in the source (UTF-16 units). */
  start: number;
  /** String and char literals: the decoded value. */
  value?: string;
  /** `bad` tokens: why Lean's reading cannot be vouched for. */
  problem?: string;
  /** A token ending in a quote (`''`, `⁻¹'`, `∑'`, `∏'`): without the notation in scope Lean
   * reads a char literal at its last quote instead, fails, and resumes at `fallbackResume`
   * (see fallbackResume). */
  quoteToken?: true;
}

/** Tokens of Lean's and Mathlib's token tables that end in a quote (besides `''`): Mathlib's
 * preimage, `tsum`, `tprod`; core's `Σ'` and `×'`. Any other quote after a symbol starts a
 * char literal to Lean. */
export const QUOTE_TOKENS: readonly string[] = ["⁻¹'", "∑'", "∏'", "Σ'", "×'"];

/** Where Lean resumes reading when a quote token is not in its token table (the header did not
 * import the notation): the quote starts a char literal, which reads one character (or fails at
 * a backslash) and then fails at the next one, one character later. Undefined when the
 * fallback reads an escape, whose extent depends on the escape. */
export function fallbackResume(text: string, token: Token): number | undefined {
  const q = token.start + token.text.length - 1;
  if (text[q + 1] === '\\') return undefined;
  let r = q + 1;
  for (let k = 0; k < 2 && r < text.length; k++) r += (text.codePointAt(r) ?? 0) > 0xffff ? 2 : 1;
  return r;
}

// ---- character classes, as Lean defines them ----

const isAsciiAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** Lean's `isLetterLike`: Greek (but λ, Π, Σ), Coptic, polytonic Greek, letter-like symbols
 * (ℕ, ℝ, …) and mathematical alphanumerics. */
function isLetterLike(c: number): boolean {
  return (
    (c >= 0x3b1 && c <= 0x3c9 && c !== 0x3bb) ||
    (c >= 0x391 && c <= 0x3a9 && c !== 0x3a0 && c !== 0x3a3) ||
    (c >= 0x3ca && c <= 0x3fb) ||
    (c >= 0x1f00 && c <= 0x1ffe) ||
    (c >= 0x2100 && c <= 0x214f) ||
    (c >= 0x1d49c && c <= 0x1d59f)
  );
}

/** Lean's `isSubScriptAlnum`: ₀–₉, subscript letters ₐ…ₜ and ᵢ…ᵪ. */
function isSubScriptAlnum(c: number): boolean {
  return (c >= 0x2080 && c <= 0x2089) || (c >= 0x2090 && c <= 0x209c) || (c >= 0x1d62 && c <= 0x1d6a);
}

export function isIdFirst(c: number): boolean {
  return isAsciiAlpha(c) || c === 0x5f || isLetterLike(c);
}

export function isIdRest(c: number): boolean {
  return isAsciiAlpha(c) || isDigit(c) || c === 0x5f || c === 0x27 || c === 0x21 || c === 0x3f || isLetterLike(c) || isSubScriptAlnum(c);
}

const ID_BEGIN_ESCAPE = 0xab; // «
const ID_END_ESCAPE = 0xbb; // »

/** Characters that are invisible, control or whitespace-like but not Lean whitespace: Lean
 * would read them as unexpected characters, and a reader would not see them. */
function isSuspicious(c: number): boolean {
  if (c < 0x20 || c === 0x7f) return true; // controls (the caller has handled \n, \t, \r)
  if (c >= 0x80 && c <= 0x9f) return true;
  // Spaces and separators other than ' ' (NBSP, en/em spaces, line/paragraph separators, …).
  if (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) || c === 0x205f || c === 0x3000)
    return true;
  // Format characters: bidi controls, zero-width joiners, word joiner, BOM, soft hyphen.
  if (c === 0xad || c === 0x61c || c === 0x180e || (c >= 0x2060 && c <= 0x206f) || c === 0xfeff || (c >= 0xfff9 && c <= 0xfffb))
    return true;
  // Surrogates on their own, private use, non-characters.
  if ((c >= 0xd800 && c <= 0xdfff) || (c >= 0xe000 && c <= 0xf8ff) || c === 0xfffe || c === 0xffff || c >= 0xf0000) return true;
  // Tags block (invisible ASCII copies).
  if (c >= 0xe0000 && c <= 0xe007f) return true;
  return false;
}

// ---- the lexer ----

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const cp = (at: number) => text.codePointAt(at) ?? -1;
  const width = (c: number) => (c > 0xffff ? 2 : 1);
  const push = (kind: TokenKind, start: number, end: number, extra: Partial<Token> = {}) => {
    tokens.push({ kind, text: text.slice(start, end), start, ...extra });
  };
  const bad = (start: number, end: number, problem: string) => push('bad', start, Math.max(end, start + 1), { problem });

  while (i < text.length) {
    const start = i;
    const c = cp(i);
    // Whitespace: Lean knows only ' ', '\t' (an error), '\n' and '\r\n'.
    if (c === 0x20 || c === 0x0a || c === 0x09 || (c === 0x0d && text[i + 1] === '\n')) {
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === 0x20 || d === 0x0a || d === 0x09) i++;
        else if (d === 0x0d && text[i + 1] === '\n') i += 2;
        else break;
      }
      push('space', start, i);
      continue;
    }
    if (c === 0x0d) {
      bad(i, i + 1, 'a carriage return on its own (Lean refuses it)');
      i++;
      continue;
    }
    // Comments. `/--` and `/-!` are doc comments: tokens to Lean, with the same nesting.
    if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
      push('comment', start, i);
      continue;
    }
    if (text.startsWith('/-', i)) {
      const isDoc = text[i + 2] === '-' || text[i + 2] === '!';
      let depth = 1;
      // A doc comment's body starts after `/--` or `/-!` (`/--/` does not close itself).
      let k = i + (isDoc ? 3 : 2);
      // Lean's finishCommentBlock: `-/` closes, `/-` opens, anything else is skipped.
      while (k < text.length && depth > 0) {
        if (text[k] === '-' && text[k + 1] === '/') {
          depth--;
          k += 2;
        } else if (text[k] === '/' && text[k + 1] === '-') {
          depth++;
          k += 2;
        } else k++;
      }
      if (depth > 0) {
        bad(start, text.length, 'a comment that is never closed');
        i = text.length;
        continue;
      }
      i = k;
      push(isDoc ? 'doc' : 'comment', start, i);
      continue;
    }
    if (c === 0x22) {
      const s = readString(text, i);
      if ('problem' in s) bad(start, s.end, s.problem);
      // After `s!`, `m!`, `f!` (with or without a space) Lean reads `{…}` in a string as code.
      else if (/[{}]/.test(s.value)) bad(start, s.end, 'braces inside a string literal (an interpolated string runs the code in them)');
      else push('string', start, s.end, { value: s.value });
      i = s.end;
      continue;
    }
    if (c === 0x27) {
      // Lean's tokenFn: a quote at a token start begins a char literal unless another quote
      // follows (`''`, a token of Mathlib's `Set.image` notation). A char literal is exactly
      // one character or escape and a closing quote; anything else is a parse error, after
      // which Lean resumes reading inside what follows, so it is `bad` here, never a symbol.
      if (text[i + 1] === "'") {
        push('symbol', start, i + 2, { quoteToken: true });
        i += 2;
        continue;
      }
      const s = readChar(text, i);
      if ('problem' in s) bad(start, s.end, s.problem);
      else push('char', start, s.end, { value: s.value });
      i = s.end;
      continue;
    }
    // Tokens that end in a quote (`f ⁻¹' s`, `∑' n, f n`, `Σ' x, p x`): longest match in
    // Lean's token table, read before a char literal could start.
    const quoted = QUOTE_TOKENS.find((q) => text.startsWith(q, i));
    if (quoted) {
      push('symbol', start, i + quoted.length, { quoteToken: true });
      i += quoted.length;
      continue;
    }
    if (c === 0x60) {
      bad(i, i + 1, 'name literals and syntax quotations (`) are not statements');
      i++;
      continue;
    }
    if (isDigit(c)) {
      const n = readNumber(text, i);
      if (n.problem) bad(start, n.end, n.problem);
      else push('number', start, n.end);
      i = n.end;
      continue;
    }
    // Raw strings `r"…"`, `r#"…"#`: Lean reads them before identifiers.
    if (c === 0x72 && (text[i + 1] === '"' || text[i + 1] === '#')) {
      bad(i, i + 2, 'raw string literals are not statements');
      i += 2;
      continue;
    }
    if (isIdFirst(c) || c === ID_BEGIN_ESCAPE) {
      const id = readIdent(text, i);
      if ('problem' in id) {
        bad(start, id.end, id.problem);
        i = id.end;
        continue;
      }
      i = id.end;
      push('ident', start, i);
      // An interpolated string (`s!"…{…}…"`, `m!`, `f!`): its braces hold code Lean parses.
      if (text[i] === '"' && text[i - 1] === '!') {
        bad(start, i + 1, 'interpolated strings are not statements');
        i++;
      }
      continue;
    }
    if (c === 0x23) {
      // `#word` is one token here (Lean matches `#eval` even inside `#evaluate`); a `#` before
      // anything else is the notation `#s`-style cardinality uses with a space or bracket.
      let k = i + 1;
      while (k < text.length && isIdRest(cp(k))) k += width(cp(k));
      push(k === i + 1 ? 'symbol' : 'hash', start, k);
      i = k;
      continue;
    }
    if (c === 0x3a && text[i + 1] === '=') {
      push('symbol', start, i + 2);
      i += 2;
      continue;
    }
    if (c === 0x40 && text[i + 1] === '[') {
      push('symbol', start, i + 2);
      i += 2;
      continue;
    }
    if (isSuspicious(c)) {
      bad(i, i + width(c), `the invisible or control character U+${c.toString(16).toUpperCase().padStart(4, '0')}`);
      i += width(c);
      continue;
    }
    push('symbol', start, i + width(c));
    i += width(c);
  }
  return tokens;
}

function readIdent(text: string, from: number): { end: number } | { end: number; problem: string } {
  let i = from;
  for (;;) {
    const c = text.codePointAt(i) ?? -1;
    if (c === ID_BEGIN_ESCAPE) {
      const close = text.indexOf(String.fromCharCode(ID_END_ESCAPE), i + 1);
      if (close < 0) return { end: text.length, problem: 'an identifier opened with « is never closed' };
      const inner = text.slice(i + 1, close);
      if (/[\n\r\t]/.test(inner) || [...inner].some((ch) => isSuspicious(ch.codePointAt(0)!))) {
        return { end: close + 1, problem: 'an «…» identifier with control or invisible characters' };
      }
      i = close + 1;
    } else if (isIdFirst(c)) {
      i += c > 0xffff ? 2 : 1;
      for (;;) {
        const d = text.codePointAt(i) ?? -1;
        if (d < 0 || !isIdRest(d)) break;
        i += d > 0xffff ? 2 : 1;
      }
    } else {
      return { end: i };
    }
    // A dot continues the name only when another part follows at once.
    const next = text.codePointAt(i + 1) ?? -1;
    if (text[i] === '.' && (isIdFirst(next) || next === ID_BEGIN_ESCAPE)) i++;
    else return { end: i };
  }
}

/** A number as Lean's `numberFnAux` reads it: `0x`/`0b`/`0o` with at least one digit, or
 * decimal digits, then `.` (with or without digits after it) and an exponent whose digits are
 * required. Where Lean errs (`0x` with no digit, `2e` with no exponent digit) it resumes right
 * after, inside what would otherwise be read as one name (`2einitialize`): `problem` then. */
function readNumber(text: string, from: number): { end: number; problem?: string } {
  let i = from;
  const run = (ok: (ch: string) => boolean) => {
    const start = i;
    while (i < text.length && ok(text[i]!)) i++;
    return i - start;
  };
  if (text[i] === '0' && /[xXbBoO]/.test(text[i + 1] ?? '')) {
    const base = text[i + 1]!.toLowerCase();
    i += 2;
    const digits = run(base === 'x' ? (ch) => /[0-9a-fA-F]/.test(ch) : base === 'b' ? (ch) => /[01]/.test(ch) : (ch) => /[0-7]/.test(ch));
    return digits > 0 ? { end: i } : { end: i, problem: `\`0${base}\` with no digit after it (Lean reads an error there)` };
  }
  run((ch) => /[0-9]/.test(ch));
  if (text[i] === '.') {
    i++;
    run((ch) => /[0-9]/.test(ch));
  }
  if (text[i] === 'e' || text[i] === 'E') {
    i++;
    if (text[i] === '+' || text[i] === '-') i++;
    if (run((ch) => /[0-9]/.test(ch)) === 0)
      return { end: i, problem: 'a number followed by `e` with no exponent digits (Lean reads an error there)' };
  }
  return { end: i };
}

type Literal = { end: number; value: string } | { end: number; problem: string };

/** An escape after a backslash at `at` (the backslash's index + 1), as Lean's `quotedCharCoreFn`
 * reads it; string gaps (backslash-newline) are refused. */
function readEscape(text: string, at: number, quote: '"' | "'"): { end: number; value: string } | { end: number; problem: string } {
  const e = text[at];
  const simple: Record<string, string> = { '\\': '\\', '"': '"', "'": "'", n: '\n', t: '\t', r: '\r' };
  if (e !== undefined && e in simple) return { end: at + 1, value: simple[e]! };
  if (e === 'x' && /^[0-9a-fA-F]{2}$/.test(text.slice(at + 1, at + 3))) {
    return { end: at + 3, value: String.fromCodePoint(parseInt(text.slice(at + 1, at + 3), 16)) };
  }
  if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5))) {
    return { end: at + 5, value: String.fromCodePoint(parseInt(text.slice(at + 1, at + 5), 16)) };
  }
  return { end: at + 1, problem: `the escape \\${e ?? ''} in a ${quote === '"' ? 'string' : 'character'} literal` };
}

function readString(text: string, from: number): Literal {
  let i = from + 1;
  let value = '';
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"') return { end: i + 1, value };
    if (ch === '\\') {
      const esc = readEscape(text, i + 1, '"');
      if ('problem' in esc) return esc;
      value += esc.value;
      i = esc.end;
      continue;
    }
    const c = text.codePointAt(i)!;
    if (ch === '\n' || ch === '\r' || ch === '\t' || isSuspicious(c))
      return { end: i + 1, problem: 'a line break or control character inside a string literal' };
    value += String.fromCodePoint(c);
    i += c > 0xffff ? 2 : 1;
  }
  return { end: text.length, problem: 'a string literal that is never closed' };
}

function readChar(text: string, from: number): Literal {
  let i = from + 1;
  let value: string;
  if (text[i] === '\\') {
    const esc = readEscape(text, i + 1, "'");
    if ('problem' in esc) return esc;
    value = esc.value;
    i = esc.end;
  } else {
    const c = text.codePointAt(i);
    if (c === undefined || c === 0x0a || c === 0x0d || c === 0x09 || isSuspicious(c))
      return { end: Math.min(text.length, i + 1), problem: "a quote (') that starts no character literal (Lean reads one and fails)" };
    value = String.fromCodePoint(c);
    i += c > 0xffff ? 2 : 1;
  }
  if (text[i] !== "'") {
    return {
      end: Math.min(text.length, i + 1),
      problem:
        "a character literal that is not closed (Lean reads `'`, one character and a quote; after the error it resumes inside the text)",
    };
  }
  return { end: i + 1, value };
}

/** The literal as a string Lean reads back exactly: only `\\`, `\"`, `\n`, `\t`, `\r`, `\'`
 * and `\xHH` escapes, never a gap. */
export function canonicalLiteral(value: string, quote: '"' | "'"): string {
  let out = '';
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}

/** 1-based line and 0-based column (in code points, as Lean counts) of an offset. */
export function positionAt(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let k = 0; k < lineStart; k++) if (before.charCodeAt(k) === 0x0a) line++;
  return { line, column: Array.from(before.slice(lineStart)).length };
}
