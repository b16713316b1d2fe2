// The three paths a text reaches the screen by, for the corpus tests: a formalizer's text, a
// gold statement, and a header. A header holds no theorem, so a text's theorem becomes an
// `abbrev` of the same type there: what is hostile in it stays in the header.
export function asHeader(text: string): string {
  const body = text
    .replace(/\b(theorem|lemma) ([^\s:({[⦃]+)/u, 'abbrev $2_header')
    .replace(/\bexample\b/u, 'abbrev example_header')
    .replace(/:= by sorry/u, ':= sorry');
  return /^\s*import\b/.test(text) ? body : `import Mathlib\n${body}`;
}

/** A benchmark item as one formalizer text: the header (imports, `open` lines, sections), the
 * definitions the statement needs (ProofNet's `hard_dependencies`, when not already in the
 * statement) and the gold theorem ending in `:= by sorry`. */
export function formalizerText(item: Record<string, unknown>, field: string): string {
  const gold = String(item[field]).trim();
  const theorem = gold.replace(/:=\s*(by\s*)?(sorry)?\s*$/u, ':= by sorry');
  const deps = Array.isArray(item.hard_dependencies) ? (item.hard_dependencies as { formal_stmt?: string }[]) : [];
  const defs = deps.map((d) => String(d.formal_stmt ?? '').trim()).filter((d) => d && !gold.includes(d));
  return [String(item.header ?? ''), ...defs, theorem].join('\n\n');
}
