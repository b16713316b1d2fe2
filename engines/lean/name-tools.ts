// Asking Lean about names: does `Nat.Prime` exist and what is its type (`inspectName`), and
// which real names are closest to an unknown identifier (`resolveName`: the library's names
// ranked by name-candidates.ts, then confirmed by `#check` in one REPL command).
import type { InspectNameInput, NameInfo, ResolveNameInput, ResolveNameResult } from '../../common/lean-types';
import type { LeanRunner } from './runner-contract';
import { rankNameCandidates } from './name-candidates';

export interface ToolOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What may be spliced into `#check @…`: a plain (dotted) Lean identifier, nothing else. */
const IDENTIFIER = /^[\p{L}_][\p{L}\p{N}_'!?₀-₉]*(\.[\p{L}_][\p{L}\p{N}_'!?₀-₉]*|\.\d+)*$/u;

export function isLeanIdentifier(name: string): boolean {
  return name.length <= 300 && IDENTIFIER.test(name);
}

/** `Nat.Prime : ℕ → Prop` → `ℕ → Prop` */
function typeFromCheck(name: string, text: string): string {
  const prefix = `${name} : `;
  if (text.startsWith(prefix)) return text.slice(prefix.length).trim();
  const i = text.indexOf(' : ');
  return i >= 0 ? text.slice(i + 3).trim() : text.trim();
}

export async function inspectName(runner: LeanRunner, input: InspectNameInput, opts: ToolOptions = {}): Promise<NameInfo> {
  const { name } = input;
  if (!isLeanIdentifier(name)) return { name, exists: false, reason: `${JSON.stringify(name)} is not a Lean identifier.` };
  const lines = [`#check @${name}`];
  if (input.includePrint ?? true) lines.push(`#print ${name}`);
  const result = await runner.check(lines.join('\n'), {
    header: input.header,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    ...(input.domain !== undefined ? { domain: input.domain } : {}),
  });
  if (result.status === 'skipped') return { name, exists: false, reason: result.reason };
  if (result.status === 'timeout') return { name, exists: false, reason: result.reason ?? 'Lean timed out.' };
  const onLine = (line: number) => result.messages.filter((m) => m.line === line);
  const check = onLine(1);
  const error = check.find((m) => m.severity === 'error');
  if (error || check.length === 0) return { name, exists: false, reason: error?.text ?? 'Lean said nothing about the name.' };
  const info: NameInfo = { name, exists: true, type: typeFromCheck(name, check[0]!.text) };
  const print = onLine(2).filter((m) => m.severity !== 'error');
  if (print.length > 0) info.text = print.map((m) => m.text).join('\n');
  return info;
}

export interface ResolveSettings extends ToolOptions {
  /** Most candidates sent to Lean for confirmation. Default 3 × topK, at most 20. */
  maxConfirm?: number;
}

/** Closest real names to `input.token` among `names`, each confirmed by `#check`. */
export async function resolveName(
  runner: LeanRunner,
  names: readonly string[],
  input: ResolveNameInput,
  settings: ResolveSettings = {},
): Promise<ResolveNameResult> {
  const topK = input.topK ?? 5;
  const ranked = rankNameCandidates(input.token, names, {
    namespaceHints: input.namespaceHints,
    topK: Math.min(settings.maxConfirm ?? topK * 3, 20),
  }).filter((c) => isLeanIdentifier(c.name) && c.name !== input.token);
  if (ranked.length === 0) return { token: input.token, suggestions: [], considered: 0 };
  // One command, one `#check` per line: line i answers for candidate i.
  const code = ranked.map((c) => `#check @${c.name}`).join('\n');
  const result = await runner.check(code, {
    header: input.header,
    timeoutMs: settings.timeoutMs,
    signal: settings.signal,
    ...(input.domain !== undefined ? { domain: input.domain } : {}),
  });
  if (result.status === 'skipped' || result.status === 'timeout') {
    return { token: input.token, suggestions: [], considered: ranked.length };
  }
  const suggestions = ranked.flatMap((candidate, i) => {
    const messages = result.messages.filter((m) => m.line === i + 1);
    if (messages.length === 0 || messages.some((m) => m.severity === 'error')) return [];
    return [{ name: candidate.name, type: typeFromCheck(candidate.name, messages[0]!.text), why: candidate.why }];
  });
  return { token: input.token, suggestions: suggestions.slice(0, topK), considered: ranked.length };
}
