// DOM for stages and results. Text from the server only ever goes in as text (textContent), so a
// statement or a compiler message can never become markup.
import type { CompileResult, EquivalenceResult, LeanMessage } from '../common/lean-types';
import type { Attempt, FormalizeResult } from '../common/run-types';
import { isStageTool, STAGE_LABELS } from '../common/stages';
import type { RunEvent } from './api';
import { withInlineCode } from './inline-text';

type Child = Node | string | null | undefined | false;

/** A tiny element builder: h('p', { class: 'x' }, 'text', child). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

function stageLabel(event: RunEvent): string {
  const base = (STAGE_LABELS as Record<string, string>)[event.stage] ?? event.stage;
  const activity = event.activity && isStageTool(event.activity) ? ` (${event.activity})` : '';
  const round = event.round !== undefined && (event.stage === 'compile' || event.stage === 'repair') ? `, round ${event.round}` : '';
  return `${base}${round}${activity}`;
}

/** Who refused: the screen before Lean, or the pool's integrity check (a forged REPL reply, or
 * Lean could not parse what the screen accepted): a hole found, not a screen refusal. */
function refusedWords(by: string | undefined): string {
  if (by === 'tampering') return "refused for tampering: the Lean REPL's reply was forged (never compiled)";
  if (by === 'disagreement') return 'refused: Lean could not parse what the screen accepted (never compiled)';
  return 'refused by the screen before Lean';
}

function stageDetail(event: RunEvent): string {
  if (event.type === 'stage.failed') return event.error ?? 'failed';
  if (event.compile) {
    if (event.compile.status === 'refused') return refusedWords(event.compile.refusedBy);
    return event.compile.status === 'error'
      ? `Lean: ${event.compile.errors} error${event.compile.errors === 1 ? '' : 's'}`
      : event.compile.status;
  }
  if (event.judge) return `grade ${event.judge.grade}/10, ${event.judge.faithful ? 'faithful' : 'not faithful'}`;
  return 'done';
}

/** How a finished stage is marked: a tick only where it went well. A compile the screen refused
 * is its own mark (Lean never saw it); one Lean rejected, timed out or did not run, and a judge's
 * "not faithful", are not ticks either. */
function stageMark(event: RunEvent): 'done' | 'refused' | 'rejected' | 'skipped' | 'failed' {
  if (event.type === 'stage.failed') return 'failed';
  switch (event.compile?.status) {
    case undefined:
    case 'ok':
      break;
    case 'refused':
      return 'refused';
    case 'skipped':
      return 'skipped';
    default:
      return 'rejected';
  }
  if (event.judge && !event.judge.faithful) return 'rejected';
  return 'done';
}

/** Keeps one list item per started activity, updated when it completes or fails. */
export class StageList {
  private readonly items = new Map<string, HTMLLIElement>();
  constructor(private readonly list: HTMLOListElement) {}

  reset(): void {
    this.items.clear();
    this.list.replaceChildren();
  }

  apply(event: RunEvent): void {
    const key = `${event.stage}|${event.activity ?? ''}|${event.round ?? ''}`;
    if (event.type === 'stage.started') {
      const li = h(
        'li',
        { class: 'stage running', 'data-stage': event.stage },
        h('span', { class: 'stage-name' }, stageLabel(event)),
        ' ',
        h('span', { class: 'state' }, 'running…'),
      );
      this.items.set(key, li);
      this.list.append(li);
      return;
    }
    if (event.type === 'stage.completed' || event.type === 'stage.failed') {
      let li = this.items.get(key);
      if (!li) {
        // Joined a run mid-way (or the start was before the events we were sent).
        li = h(
          'li',
          { class: 'stage', 'data-stage': event.stage },
          h('span', { class: 'stage-name' }, stageLabel(event)),
          ' ',
          h('span', { class: 'state' }),
        );
        this.items.set(key, li);
        this.list.append(li);
      }
      li.classList.remove('running');
      li.classList.add(stageMark(event));
      li.querySelector('.state')!.replaceChildren(...withInlineCode(stageDetail(event)));
    }
  }
}

const OUTCOME_WORDS: Record<string, string> = {
  faithful: 'Faithful: compiles, and the judge agrees it says what the statement says',
  unfaithful: 'Unfaithful: compiles, but the judge finds it says something else',
  compiled: 'Compiles (not judged)',
  'not-compiled': 'Did not compile: Lean rejected the last attempt',
  refused: 'Refused by the screen before Lean (Lean never saw the last attempt)',
  unchecked: 'Not checked: no Lean is configured',
  'budget-exhausted': 'The agent ran out of its step, token or time budget',
};

/** A refused run the screen let through: Lean's REPL saw it, and it is a hole found. */
const REFUSED_BY_WORDS: Record<string, string> = {
  tampering: "Refused for tampering: the Lean REPL's reply was not the one reply to the check (never compiled)",
  disagreement: 'Refused: Lean could not parse what the screen accepted (a screen/Lean disagreement; never compiled)',
};

export function outcomeBadge(outcome: string | undefined): HTMLSpanElement {
  return h('span', { class: `badge outcome-${outcome ?? 'none'}` }, outcome ?? '—');
}

function messageLine(message: LeanMessage): HTMLLIElement {
  return h(
    'li',
    { class: `msg ${message.severity}` },
    h('span', { class: 'where' }, `${message.severity} ${message.line}:${message.column}`),
    ' ',
    ...withInlineCode(message.text),
  );
}

/** The screen's reason without its `refused before Lean:` prefix (the label says it). */
function refusalReason(compile: Pick<CompileResult, 'reason' | 'messages'>): string {
  const text = compile.reason ?? compile.messages.find((m) => m.severity === 'error')?.text ?? '';
  return text.replace(/^\s*(?:refused|rejected) before Lean:\s*/i, '').trim() || 'no reason given';
}

/** Who decided about an attempt, in words. */
function attemptVerdict(compile: CompileResult): string {
  switch (compile.status) {
    case 'ok':
      return 'compiled';
    case 'error':
      return 'Lean rejected it';
    case 'refused':
      return refusedWords(compile.refusedBy);
    case 'skipped':
      return 'not checked (no Lean)';
    case 'timeout':
      return 'Lean ran out of time';
    default:
      return String(compile.status);
  }
}

function equivalenceLine(e: EquivalenceResult): string {
  if (e.refused)
    return `Not checked: the ${e.refused} statement was refused by the screen before Lean: ${refusalReason({ reason: e.reason ?? '', messages: [] })}`;
  if (e.refusedBy)
    return `Not compared with the gold statement: a check of the comparison was ${e.refusedBy === 'tampering' ? 'refused for tampering' : 'refused because Lean could not parse what the screen accepted'}`;
  if (e.notComparable) return `Not comparable with the gold statement${e.reason ? `: ${e.reason}` : ''}`;
  if (e.equivalent) return 'Equivalent to the gold statement (Lean proved both directions)';
  return `Not shown equivalent to the gold statement${e.reason ? `: ${e.reason}` : ''}`;
}

/** An earlier attempt, folded: the last one is the result's own statement and messages, shown
 * once above. */
function attemptBlock(attempt: Attempt): HTMLElement {
  return h(
    'details',
    { class: 'attempt' },
    h('summary', {}, `Attempt ${attempt.round}: ${attemptVerdict(attempt.compile)}`),
    h('pre', { class: 'lean' }, h('code', {}, attempt.statement)),
    attempt.compile.messages.length > 0
      ? h(
          'ul',
          {
            class: 'messages',
            'aria-label': attempt.compile.status === 'refused' && !attempt.compile.refusedBy ? 'Screen messages' : 'Compiler messages',
          },
          ...attempt.compile.messages.map(messageLine),
        )
      : h(
          'p',
          { class: 'help' },
          ...withInlineCode(attempt.compile.reason ?? (attempt.compile.status === 'ok' ? 'No messages.' : attempt.compile.status)),
        ),
  );
}

/** The finished run: statement, compiler messages, judge, premises, examples, notes. */
export function renderResult(result: FormalizeResult & { indexVersion?: string }, temporalUrl?: string): HTMLElement {
  const attempts = result.attempts ?? [];
  const last = attempts[attempts.length - 1];
  const judge = result.judge;
  return h(
    'div',
    { class: 'result' },
    h('h3', {}, 'Result'),
    h(
      'p',
      { class: 'outcome' },
      outcomeBadge(result.outcome),
      ' ',
      (result.outcome === 'refused' && last?.compile.refusedBy ? REFUSED_BY_WORDS[last.compile.refusedBy] : undefined) ??
        OUTCOME_WORDS[result.outcome] ??
        result.outcome,
    ),
    result.outcome === 'refused' && last
      ? h(
          'p',
          { class: 'refusal' },
          ...withInlineCode(`${last.compile.refusedBy ? 'Refused' : 'Refused by the screen'}: ${refusalReason(last.compile)}`),
        )
      : null,
    h('h4', {}, 'Lean statement'),
    last && attempts.length > 1
      ? h('p', { class: 'help last-attempt' }, `Attempt ${last.round} of ${attempts.length}: ${attemptVerdict(last.compile)}`)
      : null,
    h('pre', { class: 'lean final' }, h('code', {}, result.formalStatement)),
    last && last.compile.messages.length > 0
      ? h(
          'ul',
          {
            class: 'messages',
            'aria-label': last.compile.status === 'refused' && !last.compile.refusedBy ? 'Screen messages' : 'Compiler messages',
          },
          ...last.compile.messages.map(messageLine),
        )
      : null,
    result.equivalence ? h('p', { class: 'equivalence' }, ...withInlineCode(equivalenceLine(result.equivalence))) : null,
    judge
      ? h(
          'section',
          { class: 'judge', 'aria-label': 'Judge' },
          h('h4', {}, `Judge: grade ${judge.grade}/10, ${judge.faithful ? 'faithful' : 'not faithful'}`),
          h('p', {}, ...withInlineCode(judge.explanation)),
        )
      : h('p', { class: 'help' }, 'Not judged.'),
    result.steps && result.steps.length > 0
      ? h(
          'details',
          { class: 'steps' },
          h('summary', {}, `Agent steps (${result.steps.length})`),
          h(
            'ol',
            {},
            ...result.steps.map((step) =>
              h('li', { class: step.error ? 'msg error' : 'msg' }, h('span', { class: 'where' }, step.tool ?? 'answer'), ' ', step.output),
            ),
          ),
        )
      : null,
    attempts.length > 1
      ? h(
          'section',
          { 'aria-label': 'Earlier attempts' },
          h('h4', {}, `Earlier attempts (${attempts.length - 1})`),
          ...attempts.slice(0, -1).map(attemptBlock),
        )
      : null,
    h(
      'section',
      { class: 'premises', 'aria-label': 'Premises' },
      h('h4', {}, `Premises (${result.premises.length})`),
      result.premises.length === 0
        ? h('p', { class: 'help' }, 'None.')
        : h(
            'ul',
            {},
            ...result.premises.map((p) =>
              h(
                'li',
                {},
                h('code', { class: 'name' }, p.name),
                ' ',
                h('span', { class: 'kind' }, p.kind),
                p.subquery !== undefined && result.subqueries[p.subquery]
                  ? h('span', { class: 'help' }, ` for “${result.subqueries[p.subquery]!.phrase}”`)
                  : null,
                h('pre', { class: 'lean small' }, h('code', {}, p.declaration)),
                p.source || p.module
                  ? h(
                      'details',
                      {},
                      h('summary', {}, `Source${p.module ? ` (${p.module})` : ''}`),
                      h('pre', { class: 'lean small' }, h('code', {}, p.source ?? '(no source in the corpus)')),
                    )
                  : null,
              ),
            ),
          ),
    ),
    h(
      'section',
      { class: 'examples', 'aria-label': 'Examples' },
      h('h4', {}, `Examples (${result.examples.length})`),
      result.examples.length === 0
        ? h('p', { class: 'help' }, 'None.')
        : h(
            'ul',
            {},
            ...result.examples.map((e) =>
              h(
                'li',
                {},
                h('code', { class: 'name' }, e.name),
                e.informal ? h('p', {}, e.informal) : null,
                h('pre', { class: 'lean small' }, h('code', {}, e.formal)),
              ),
            ),
          ),
    ),
    h(
      'details',
      { class: 'trace' },
      h('summary', {}, 'How it went'),
      result.subqueries.length > 0
        ? h(
            'ul',
            { 'aria-label': 'Sub-queries' },
            ...result.subqueries.map((q) => h('li', {}, q.phrase, q.formal ? h('code', {}, ` ${q.formal}`) : null)),
          )
        : null,
      h('ul', { 'aria-label': 'Notes' }, ...result.notes.map((n) => h('li', {}, ...withInlineCode(n)))),
      h('p', {}, `Library ${result.library}${result.indexVersion ? `, index ${result.indexVersion}` : ''}.`),
    ),
    temporalUrl ? h('p', {}, h('a', { href: temporalUrl, target: '_blank', rel: 'noopener' }, 'This run in the Temporal UI')) : null,
  );
}
