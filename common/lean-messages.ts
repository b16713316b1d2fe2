// Reading Lean's messages and statements where both workflows and activities need it. Pure,
// with no imports, so the workflow bundle can use it.

/** Identifiers Lean reported as unknown in a check's messages, in order, without repeats. */
export function unknownIdentifiers(messages: readonly { text: string; severity: string }[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.severity !== 'error') continue;
    const match = /unknown (?:identifier|constant) '([^']+)'/.exec(m.text);
    if (match && !out.includes(match[1]!)) out.push(match[1]!);
  }
  return out;
}

/** Namespaces a statement opens (`open Nat Real`), as hints for ranking names. */
export function openedNamespaces(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/^\s*open\s+([^\n]*?)(?:\s+in)?\s*$/gm)) {
    for (const ns of m[1]!.split(/\s+/)) if (/^[\p{L}_][\p{L}\p{N}_.']*$/u.test(ns) && !out.includes(ns)) out.push(ns);
  }
  return out;
}
