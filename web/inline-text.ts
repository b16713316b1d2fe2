// Server text as DOM nodes, never as markup: Markdown code spans (`:=`) become <code> elements
// whose content is set as text, and long identifiers get break opportunities at their separators.
// Nothing here parses HTML, so a message holding `<img onerror=…>` stays the characters it is.

/** Text with its Markdown code spans as <code>: a run of n backticks opens a span that the next
 * run of exactly n closes (CommonMark); an unclosed run stays literal. One leading and trailing
 * space inside a span are dropped when both are there, so `` `a` `` can hold a backtick. */
export function withInlineCode(text: string): (Node | string)[] {
  const out: (Node | string)[] = [];
  let plain = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '`') {
      const next = text.indexOf('`', i);
      const end = next === -1 ? text.length : next;
      plain += text.slice(i, end);
      i = end;
      continue;
    }
    let run = i;
    while (text[run] === '`') run++;
    const ticks = run - i;
    const close = closingRun(text, run, ticks);
    if (close === -1) {
      plain += text.slice(i, run);
      i = run;
      continue;
    }
    let inner = text.slice(run, close).replace(/\n/g, ' ');
    if (inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' ') && inner.trim() !== '') inner = inner.slice(1, -1);
    if (plain) out.push(plain);
    plain = '';
    const code = document.createElement('code');
    code.textContent = inner;
    out.push(code);
    i = close + ticks;
  }
  if (plain) out.push(plain);
  return out;
}

/** Where the next run of exactly `ticks` backticks after `from` starts, or -1. */
function closingRun(text: string, from: number, ticks: number): number {
  let i = text.indexOf('`', from);
  while (i !== -1) {
    let end = i;
    while (text[end] === '`') end++;
    if (end - i === ticks) return i;
    i = text.indexOf('`', end);
  }
  return -1;
}

/** An identifier (a run's or sweep's ID) with a <wbr> after each separator (`/`, `-`, `_`, `.`,
 * `:`), so a narrow screen wraps it between its parts; its text is unchanged. */
export function breakableId(id: string): (Node | string)[] {
  const out: (Node | string)[] = [];
  for (const part of id.split(/(?<=[/\-_.:])/)) {
    if (out.length > 0) out.push(document.createElement('wbr'));
    out.push(part);
  }
  return out;
}
