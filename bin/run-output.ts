// How the CLI shows runs: stage lines while one runs, the result, a listing. Output only.
import type { RunEvent } from '../client/run-events';
import type { RunSummary, RunView } from '../client/runs';
import type { FormalizeResult } from '../common/run-types';
import { equivalenceVerdict, refusalLabel } from '../common/verdict';

const STAGE_LABELS: Record<string, string> = {
  decompose: 'decompose: splitting the statement into atomic concepts',
  retrieve: 'retrieve: finding library premises',
  illustrate: 'illustrate: choosing example theorems',
  formalize: 'formalize: writing the Lean statement',
  compile: 'compile: checking with Lean',
  repair: 'repair: rewriting from the compiler messages',
  judge: 'judge: grading faithfulness',
  agent: 'agent: the model calls tools step by step',
};

/** Prints one line per stage as it starts (a repair round or compile round once), and the
 * compiler's verdict of each round; returns a function fed with the run's events. */
export function stagePrinter(write: (line: string) => void): (event: RunEvent) => void {
  let last = '';
  return (event) => {
    if (event.type === 'stage.started' && event.stage === 'agent') {
      // Every call of the agent loop is a step worth a line of its own.
      write(`  • agent step ${event.step}: ${event.activity}`);
    } else if (event.type === 'stage.started') {
      const key = `${event.stage}#${event.round ?? ''}`;
      if (key === last) return;
      last = key;
      const round = event.stage === 'repair' || (event.stage === 'compile' && (event.round ?? 0) > 0) ? ` (round ${event.round})` : '';
      write(`  • ${STAGE_LABELS[event.stage] ?? event.stage}${round}`);
    } else if (event.type === 'stage.completed' && event.compile) {
      const { status, errors, refusedBy } = event.compile;
      // The screen decided, not Lean: never worded as a compile error. A refusal the screen did
      // not make (a forged REPL reply, a parse disagreement) is a hole found, said apart.
      if (status === 'refused' && refusedBy === 'tampering')
        write("      refused for tampering: the Lean REPL's reply was forged (never compiled)");
      else if (status === 'refused' && refusedBy === 'disagreement')
        write('      refused: Lean could not parse what the screen accepted (never compiled)');
      else if (status === 'refused') write('      refused by the screen before Lean (Lean never saw it)');
      else
        write(
          `      ${status === 'ok' ? 'compiled' : status === 'error' ? 'Lean rejected it' : status}${errors ? ` (${errors} error${errors === 1 ? '' : 's'})` : ''}`,
        );
    } else if (event.type === 'stage.failed') {
      write(`      ${event.activity ?? event.stage} failed: ${event.error ?? 'unknown error'}`);
    }
  };
}

export function printResult(result: FormalizeResult, out: NodeJS.WritableStream = process.stdout): void {
  out.write('\n');
  out.write(`${result.formalStatement}\n\n`);
  const last = result.attempts.at(-1);
  const refused = result.outcome === 'refused';
  const refusedBy = refused ? last?.compile.refusedBy : undefined;
  const compiled = refused
    ? refusedBy
      ? `no: ${refusedBy === 'tampering' ? "refused for tampering (the Lean REPL's reply was forged)" : 'refused (Lean could not parse what the screen accepted)'}`
      : 'no: refused by the screen before Lean (Lean never saw it)'
    : !result.checked
      ? 'not checked (no Lean REPL configured)'
      : result.compiled
        ? 'yes'
        : 'no: Lean rejected it';
  out.write(`outcome:   ${refused ? (last ? refusalLabel(last.compile) : 'refused by the screen: no reason given') : result.outcome}\n`);
  out.write(`compiled:  ${compiled}  (${result.attempts.length} attempt${result.attempts.length === 1 ? '' : 's'})\n`);
  if (refused && last) {
    // The screen's message, at the place it refused (Lean's, when Lean's REPL refused it).
    for (const m of last.compile.messages)
      out.write(
        `${refusedBy ? 'lean:     ' : 'screen:   '} ${m.line}:${m.column}: ${m.severity}: ${m.text.split('\n').join('\n           ')}\n`,
      );
  } else if (result.checked && !result.compiled && last) {
    // What Lean said about the last attempt: the reason it did not compile.
    if (last.compile.reason) out.write(`lean:      ${last.compile.reason}\n`);
    for (const m of last.compile.messages) {
      const text = m.text.split('\n').join('\n           ');
      out.write(`lean:      ${m.line}:${m.column}: ${m.severity}: ${text}\n`);
    }
  }
  if (result.judge) {
    out.write(`judge:     ${result.judge.grade}/10, ${result.judge.faithful ? 'faithful' : 'not faithful'}\n`);
    out.write(`           ${result.judge.explanation}\n`);
  }
  if (result.equivalence) out.write(`gold:      ${equivalenceVerdict(result.equivalence)}\n`);
  if (result.agent) {
    const a = result.agent;
    out.write(
      `agent:     ${a.ending}${a.budget ? ` (${a.budget})` : ''} after ${a.steps} step${a.steps === 1 ? '' : 's'}, ${a.tokens.total} tokens\n`,
    );
    for (const s of result.steps ?? []) {
      out.write(
        `  ${String(s.step).padStart(2)}. ${s.tool ?? 'answer'}${s.error ? ' (error)' : ''}${s.accepted === false ? ' (refused)' : ''}: ${s.output.slice(0, 100)}\n`,
      );
    }
  }
  out.write(`premises:  ${result.premises.map((p) => p.name).join(', ') || '(none)'}\n`);
  out.write(`examples:  ${result.examples.map((e) => e.name).join(', ') || '(none)'}\n`);
  for (const note of result.notes) out.write(`note:      ${note}\n`);
}

export function printRunView(view: RunView, uiLink: string, out: NodeJS.WritableStream = process.stdout): void {
  out.write(`run:       ${view.id}\n`);
  out.write(`status:    ${view.status}${view.status === 'running' && view.progress ? ` (stage ${view.progress.stage})` : ''}\n`);
  out.write(`ui:        ${uiLink}\n`);
  if (view.error) out.write(`error:     ${view.error}\n`);
  if (view.result) printResult(view.result, out);
}

export function printRunTable(items: RunSummary[], out: NodeJS.WritableStream = process.stdout): void {
  if (items.length === 0) {
    out.write('(no runs)\n');
    return;
  }
  const rows = items.map((r) => [r.id, r.status, r.outcome ?? r.stage ?? '', r.library ?? '', r.startedAt.replace('T', ' ').slice(0, 19)]);
  const header = ['ID', 'STATUS', 'OUTCOME/STAGE', 'LIBRARY', 'STARTED (UTC)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows])
    out.write(
      `${row
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
}
