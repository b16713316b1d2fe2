// The one screening function for a text from outside: a formalizer's whole text (the
// definitions a statement needs, then the theorem) or a benchmark's gold statement, with the
// header (imports and the lines a benchmark puts before the statement) when there is one. Every
// path that takes such a text uses it: compile (runs, repairs, predictions), the agent's
// `write_file`, POST /v1/checks, the API's `goldStatement`, the MCP tool and `driftline screen`.
// The grammar itself is statement-safety.ts; this adds the checks that come before it (an empty
// text, one with nothing but imports) and says which part was refused. Pure.
import type { LeanMessage } from '../../common/lean-types';
import { invalidStatementReason } from './lean-source';
import { DEFAULT_SAFETY_POLICY, screenHeader, screenStatement, type SafetyPolicy, type ScreenedStatement } from './statement-safety';

/** How a text is read: `formalizer` (the default) a formalizer's whole text ending in
 * `:= by sorry`; `gold` a benchmark's gold statement, whose proof may be left out (`… := by`). */
export type ScreenAs = 'formalizer' | 'gold';
export const SCREEN_AS: readonly ScreenAs[] = ['formalizer', 'gold'];

export interface ScreenInput {
  statement: string;
  /** Imports and lines a benchmark puts before the statement. */
  header?: string;
  as?: ScreenAs;
}

export type ScreenVerdict =
  | {
      accepted: true;
      /** The statement as Lean is sent it (rebuilt from the tokens). */
      text: string;
      /** The header as Lean is sent it, when one was given. */
      header?: string;
      parts: ScreenedStatement;
    }
  | {
      accepted: false;
      /** Which text was refused; `line`/`column` of `message` are positions in that text. */
      part: 'statement' | 'header';
      /** Why, naming the construct and where it is (without the advice the repair prompt gets). */
      reason: string;
      /** A compiler-style error at the offending place, its text starting `refused before Lean:`. */
      message: LeanMessage;
    };

function refusedAt(part: 'statement' | 'header', reason: string): ScreenVerdict {
  return {
    accepted: false,
    part,
    reason,
    message: { severity: 'error', line: 1, column: 0, text: `refused before Lean: ${reason}` },
  };
}

/** Whether `input` may reach Lean, and the text Lean is sent when it may. */
export function screenText(input: ScreenInput, policy: SafetyPolicy = DEFAULT_SAFETY_POLICY): ScreenVerdict {
  let header: string | undefined;
  if (input.header !== undefined && input.header.trim() !== '') {
    const screened = screenHeader(input.header, policy);
    if (!screened.ok) return { accepted: false, part: 'header', reason: screened.reason, message: screened.message };
    header = screened.value;
  }
  const invalid = invalidStatementReason(input.statement);
  // invalidStatementReason speaks in sentences; the verdict's reason is a clause like the grammar's.
  if (invalid) return refusedAt('statement', invalid.replace(/\.$/, ''));
  const screened = screenStatement(input.statement, policy, { gold: input.as === 'gold' });
  if (!screened.ok) return { accepted: false, part: 'statement', reason: screened.reason, message: screened.message };
  return { accepted: true, text: screened.value.text, ...(header !== undefined ? { header } : {}), parts: screened.value };
}

type Refused = Extract<ScreenVerdict, { accepted: false }>;

/** The reason without the position the grammar appends to it, for a reader given the position apart. */
export function bareReason(verdict: Refused): string {
  const suffix = ` (line ${verdict.message.line}, column ${verdict.message.column})`;
  return verdict.reason.endsWith(suffix) ? verdict.reason.slice(0, -suffix.length) : verdict.reason;
}

/** A refusal in one line for people and API answers: `statement is refused before Lean (line
 * 3, column 4): reason`; `field` names the text as the caller knows it. */
export function describeRefusal(verdict: Refused, field: string = verdict.part): string {
  return `${field} is refused before Lean (line ${verdict.message.line}, column ${verdict.message.column}): ${bareReason(verdict)}`;
}
