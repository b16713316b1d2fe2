// `driftline screen FILE.jsonl [--as formalizer|gold] [--json]`: the screen that guards every
// path to Lean, run offline on a file (no stack, no Temporal, no Lean). Each line is
// `{"id"?: string, "statement": string, "header"?: string}`; each is screened by the function
// the API, predictions and runs use (engines/lean/screen-text.ts) under the configured policy.
// A refusal is a result; a file that cannot be read, or a line that is not such an object, is an
// error naming the line (and quoting nothing of it). Fields other than these three are ignored,
// so a predictions file or a sweep's export can be screened as it is.
import { createReadStream } from 'node:fs';
import type { SafetyPolicy } from '../engines/lean/statement-safety';
import { bareReason, screenText, type ScreenAs } from '../engines/lean/screen-text';
import { screenPolicyOf } from '../infra/screen-policy';
import { configOrExit, fail } from './cli-support';

/** A longer line is not read (it could only hold a text the screen refuses for its length). */
export const MAX_SCREEN_LINE_BYTES = 64 * 1024 * 1024;

export interface ScreenLine {
  id?: string;
  statement: string;
  header?: string;
}

/** One line's result, as `--json` prints it. Positions are in the refused text (the statement,
 * or the header when the reason says so): lines from 1, columns from 0, as Lean counts them. */
export interface ScreenLineResult {
  id: string | null;
  accepted: boolean;
  reason?: string;
  line?: number;
  column?: number;
}

export class ScreenFileError extends Error {
  override name = 'ScreenFileError';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The file's lines (1-based numbers), read as a stream: memory stays bounded by the longest line. */
export async function* fileLines(file: string): AsyncGenerator<{ number: number; text: string }> {
  let chunks: Buffer[] = [];
  let size = 0;
  let number = 1;
  let tooLong = false;
  const finish = (last: Buffer): { number: number; text: string } => {
    if (tooLong) throw new ScreenFileError(`${file}:${number}: the line is longer than ${MAX_SCREEN_LINE_BYTES} bytes; not screened`);
    const bytes = chunks.length ? Buffer.concat([...chunks, last]) : last;
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new ScreenFileError(`${file}:${number}: the line is not UTF-8`);
    }
    if (number === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
    return { number, text: text.endsWith('\r') ? text.slice(0, -1) : text };
  };
  let stream;
  try {
    stream = createReadStream(file);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let from = 0;
      for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
        const piece = chunk.subarray(from, nl);
        if (!tooLong && size + piece.length > MAX_SCREEN_LINE_BYTES) tooLong = true;
        yield finish(piece);
        chunks = [];
        size = 0;
        tooLong = false;
        number++;
        from = nl + 1;
      }
      const rest = chunk.subarray(from);
      if (tooLong || size + rest.length > MAX_SCREEN_LINE_BYTES) {
        // Keep counting the line's end, not its bytes.
        tooLong = true;
        chunks = [];
      } else if (rest.length) {
        chunks.push(Buffer.from(rest));
        size += rest.length;
      }
    }
  } catch (err) {
    if (err instanceof ScreenFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : code === 'EACCES' ? 'not readable' : 'cannot be read';
    throw new ScreenFileError(`${file}: ${why}`);
  }
  if (size > 0 || tooLong) yield finish(Buffer.alloc(0));
}

function describeType(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** One line as `{"id"?, "statement", "header"?}`, or throws naming the line and the field. */
export function parseScreenLine(text: string, where: string): ScreenLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's message quotes the line; the file's contents are never echoed.
    throw new ScreenFileError(`${where}: not JSON (each line is {"id"?: string, "statement": string, "header"?: string})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ScreenFileError(`${where}: ${describeType(value)}, not a JSON object {"id"?, "statement", "header"?}`);
  // Own keys only: a line's `__proto__` or `constructor` is data, never a default.
  const own = (key: string): unknown => (Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined);
  const statement = own('statement');
  if (statement === undefined) throw new ScreenFileError(`${where}: statement: missing`);
  if (typeof statement !== 'string') throw new ScreenFileError(`${where}: statement: ${describeType(statement)}, not a string`);
  const line: ScreenLine = { statement };
  for (const field of ['id', 'header'] as const) {
    const v = own(field);
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new ScreenFileError(`${where}: ${field}: ${describeType(v)}, not a string`);
    line[field] = v;
  }
  return line;
}

/** One line's verdict, from the one screening function. */
export function screenLine(item: ScreenLine, as: ScreenAs, policy?: SafetyPolicy): ScreenLineResult {
  const verdict = screenText({ statement: item.statement, ...(item.header !== undefined ? { header: item.header } : {}), as }, policy);
  const id = item.id ?? null;
  if (verdict.accepted) return { id, accepted: true };
  return {
    id,
    accepted: false,
    // The position is given apart (`line`, `column`), so the reason is the construct and why.
    reason: verdict.part === 'header' ? `in the header: ${bareReason(verdict)}` : bareReason(verdict),
    line: verdict.message.line,
    column: verdict.message.column,
  };
}

/** Every line of `file` screened, in order (blank lines skipped); throws ScreenFileError. */
export async function screenFile(file: string, as: ScreenAs, policy?: SafetyPolicy): Promise<(ScreenLineResult & { fileLine: number })[]> {
  const results: (ScreenLineResult & { fileLine: number })[] = [];
  for await (const { number, text } of fileLines(file)) {
    if (text.trim() === '') continue;
    results.push({ ...screenLine(parseScreenLine(text, `${file}:${number}`), as, policy), fileLine: number });
  }
  return results;
}

/** The human summary: counts, then each refusal with its id (or file line), position and reason. */
export function screenSummary(file: string, results: readonly (ScreenLineResult & { fileLine: number })[], as: ScreenAs): string {
  const refused = results.filter((r) => !r.accepted);
  const lines = [
    `${file}: ${results.length} ${as === 'gold' ? 'gold statement' : 'formalizer text'}${results.length === 1 ? '' : 's'} screened: ` +
      `${results.length - refused.length} accepted, ${refused.length} refused`,
  ];
  for (const r of refused) {
    // Quoted (control characters escaped) and cut: an id is the file's text.
    const id = r.id !== null ? JSON.stringify(r.id.length > 80 ? `${r.id.slice(0, 80)}…` : r.id) : undefined;
    const who = id !== undefined ? `${id} (line ${r.fileLine})` : `line ${r.fileLine}`;
    lines.push(`  ${who}: refused at ${r.line}:${r.column}: ${r.reason}`);
  }
  return lines.join('\n');
}

export async function screenCommand(file: string, opts: { as?: ScreenAs; json?: boolean }): Promise<void> {
  const as = opts.as ?? 'formalizer';
  // The configured policy (allowed imports, a library's command keywords), as the Lean worker's.
  const policy = screenPolicyOf(configOrExit({ skipFileChecks: true }));
  let results;
  try {
    results = await screenFile(file, as, policy);
  } catch (err) {
    if (err instanceof ScreenFileError) fail(err.message);
    throw err;
  }
  if (opts.json) {
    process.stdout.write(results.map(({ fileLine: _line, ...r }) => `${JSON.stringify(r)}\n`).join(''));
    return;
  }
  process.stdout.write(`${screenSummary(file, results, as)}\n`);
}
