// Tokenization for lexical search over Lean names, signatures and informal text.
// A Lean name yields the whole dotted name, its dotted suffixes (what `open` lets people write),
// and its words (namespaces, camelCase humps, snake_case parts, digit runs), so a query for
// "primitive root" meets `IsPrimitiveRoot` and a query for `Nat.Prime` meets `Nat.Prime` first.

/** Bump when tokens change: persisted indexes built with another version are rebuilt. */
export const TOKENIZER_VERSION = 1;

// Short on purpose: words like "is", "of", "the" carry nothing, while mathematical words
// ("order", "set", "map", "sum") must survive.
const STOPWORDS = new Set(
  (
    'a an and are as at be by for from has have if in into is it its let of on or such that the ' +
    'then there these this those to was were which with where when we our us any all each ' +
    'every some show prove suppose given holds statement theorem lemma states lean sorry fun def'
  ).split(' '),
);

// Notation whose meaning is a word people also write: `ℕ` is "nat", `∣` is "dvd", etc.
// Other symbols (arrows, brackets, operators) are dropped: too frequent to discriminate.
const SYMBOL_WORDS: Record<string, string> = {
  ℕ: 'nat',
  ℤ: 'int',
  ℚ: 'rat',
  ℝ: 'real',
  ℂ: 'complex',
  '∣': 'dvd',
  '∑': 'sum',
  '∏': 'prod',
  '∫': 'integral',
  '⁻¹': 'inv',
  '√': 'sqrt',
  '∘': 'comp',
  '⊆': 'subset',
  '⊂': 'ssubset',
  '∪': 'union',
  '∩': 'inter',
  '∅': 'empty',
  '≃': 'equiv',
  '≅': 'iso',
  '≡': 'modeq',
  '∈': 'mem',
  '∉': 'mem',
  '‖': 'norm',
  '⊤': 'top',
  '⊥': 'bot',
  '∞': 'infinity',
};

// Notation is turned into its word before identifiers are matched (`ℕ` is a letter to the
// regex, and `⁻¹` two characters).
const SYMBOL_RE = new RegExp(
  Object.keys(SYMBOL_WORDS)
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|'),
  'gu',
);

// A Lean identifier (possibly dotted) or a number. Subscripts and `'`, `!`, `?` may end an
// identifier part (`x₁`, `h'`, `get!`). Other symbols fall between matches and are dropped.
const IDENT_PART = "[\\p{L}_][\\p{L}\\p{N}_₀-₉'!?]*";
const TOKEN_RE = new RegExp(`(${IDENT_PART}(?:\\.${IDENT_PART})*)|(\\p{N}+)`, 'gu');

/** Light plural stripping (the S-stemmer), so "primes" meets `Nat.Prime`. */
export function stem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  if (word.endsWith('ies') && !/[ae]ies$/.test(word)) return word.slice(0, -3) + 'y';
  if (word.endsWith('es') && !/[aeo]es$/.test(word) && /(ss|sh|ch|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(us|ss|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Splits one name component into words: `IsPrimitiveRoot` → Is, Primitive, Root;
 * `two_le` → two, le; `ConNF` → Con, NF; `Fin2` → Fin, 2; `HTMLParser` → HTML, Parser. */
export function splitWords(part: string): string[] {
  return part
    .replace(/['!?₀-₉]/g, ' ')
    .split(/_+/)
    .flatMap((chunk) => chunk.match(/\p{Lu}+(?![\p{Ll}])|\p{Lu}?\p{Ll}+|\p{Lu}|\p{Lo}+|\p{N}+|\p{L}/gu) ?? []);
}

function keepWord(word: string, inCompound: boolean): boolean {
  // Single latin letters are variables (p, x, n). Stopwords carry nothing in prose, but inside
  // a compound name they are part of its meaning (`IsPrimitiveRoot` → is, primitive, root).
  if (/^[a-z]$/.test(word)) return false;
  return inCompound || !STOPWORDS.has(word);
}

/** Tokens of one Lean name, whole-name and suffix tokens first.
 * `Nat.Prime` → nat.prime, prime, nat (the component words, stemmed). */
export function tokenizeName(name: string, out: string[] = []): string[] {
  const lower = name.toLowerCase();
  const parts = lower.split('.').filter(Boolean);
  // Dotted suffixes of two or more parts (`nat.prime.two_le`, `prime.two_le`), what `open`
  // lets people write; then the last part whole if it is compound (`two_le`, `isprimitiveroot`).
  for (let i = 0; i < parts.length - 1; i++) out.push(parts.slice(i).join('.'));
  const last = name.split('.').filter(Boolean).pop();
  if (last !== undefined && splitWords(last).length > 1) out.push(last.toLowerCase());
  const words = name.split('.').flatMap(splitWords);
  for (const w of words) {
    const word = w.toLowerCase();
    if (keepWord(word, words.length > 1)) out.push(stem(word));
  }
  return out;
}

/** Tokens of free text mixing prose, Lean names and notation. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const spelled = text.replace(SYMBOL_RE, (sym) => ` ${SYMBOL_WORDS[sym] ?? ''} `);
  for (const m of spelled.matchAll(TOKEN_RE)) {
    // A sentence-ending dot is not part of a match: a dot must be followed by a name part.
    if (m[1] !== undefined) tokenizeName(m[1], out);
    else if (m[2] !== undefined) out.push(m[2]);
  }
  return out;
}
