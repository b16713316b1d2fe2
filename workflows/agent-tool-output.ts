// What the agent's tools say back: the text the model reads (bounded, so the transcript that
// travels with every step stays small) and a one-line summary for the result and the UI. Pure.
import type { CompileResult, LeanMessage, NameInfo, ResolveNameResult } from '../common/lean-types';
import type { Premise } from '../common/retrieval-types';

/** Longest tool output the model reads; the rest is cut with a note. */
export const MAX_TOOL_OUTPUT_CHARS = 4000;
/** Longest summary kept in a step record. */
export const MAX_SUMMARY_CHARS = 300;

export function bounded(text: string, max = MAX_TOOL_OUTPUT_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters cut)`;
}

export function summarize(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_SUMMARY_CHARS ? flat : `${flat.slice(0, MAX_SUMMARY_CHARS - 1)}…`;
}

function messageLine(m: LeanMessage): string {
  return `line ${m.line}, column ${m.column}: ${m.severity}: ${m.text}`;
}

export function compileOutput(result: CompileResult): string {
  const lines = result.messages.map(messageLine).join('\n');
  switch (result.status) {
    case 'ok':
      return bounded(`Lean accepted the file.${lines ? `\n${lines}` : ''}`);
    case 'error':
      return bounded(`Lean did not accept the file:\n${lines || result.reason || 'no message'}`);
    case 'refused':
      return bounded(
        `The statement screen refused the file before Lean; nothing was sent to Lean:\n${lines || result.reason || 'no message'}`,
      );
    case 'timeout':
      return bounded(`Lean ran out of time on the file.${result.reason ? ` ${result.reason}` : ''}${lines ? `\n${lines}` : ''}`);
    case 'skipped':
      return `Lean is not available here (${result.reason ?? 'no Lean configured'}); the file was not checked.`;
  }
}

export function screenOutput(rejection: LeanMessage | null, chars: number): string {
  return rejection ? `The file was not written: ${messageLine(rejection)}` : `The working file now holds your code (${chars} characters).`;
}

export function inspectOutput(info: NameInfo): string {
  if (!info.exists) return `Lean does not know \`${info.name}\`${info.reason ? `: ${info.reason}` : '.'}`;
  return bounded([`${info.name} : ${info.type ?? '?'}`, info.text ? `\n${info.text}` : ''].join(''));
}

export function resolveOutput(result: ResolveNameResult): string {
  if (result.suggestions.length === 0)
    return `No real name close to \`${result.token}\` was found (${result.considered} candidates checked).`;
  return bounded(
    [
      `Real names close to \`${result.token}\`:`,
      ...result.suggestions.map((s) => `- ${s.name}${s.type ? ` : ${s.type}` : ''} (${s.why})`),
    ].join('\n'),
  );
}

export function premisesOutput(premises: Premise[]): string {
  if (premises.length === 0) return 'Nothing in the library matched.';
  return bounded(premises.map((p) => `- ${p.name}: ${p.declaration}`).join('\n'));
}
