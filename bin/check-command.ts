// `driftline check FILE.jsonl`: a batch of Lean statements checked without an LLM (workflow
// `checkStatements`, client/checks.ts). Each line is `{"id"?, "statement", "gold"?}`; every line
// is read and validated before anything starts, a bad one named `FILE:LINE: field: problem`.
// Its exit status: bin/exit-codes.ts (the worst of the batch).
import { readFileSync } from 'node:fs';
import { configOrExit as config, fail } from './cli-support';
import { connectClient } from '../infra/connect';
import { followChecks, getChecks, MAX_CHECK_STATEMENTS, startChecks, summarizeChecks, type ChecksSummaryCounts } from '../client/checks';
import type { CheckItem, CheckItemResult } from '../common/checks';
import { checksExitCode, EXIT } from './exit-codes';

/** The file's statements, or the problems of its lines (each `FILE:LINE: field: problem`). */
export function parseCheckFile(file: string, text: string, maxStatementChars: number): { items: CheckItem[]; problems: string[] } {
  const items: CheckItem[] = [];
  const problems: string[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // The parser's message quotes the line; the file's contents are never echoed.
      problems.push(`${where}: line: not JSON`);
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${where}: line: expected a JSON object`);
      return;
    }
    const record = value as Record<string, unknown>;
    const before = problems.length;
    for (const key of Object.keys(record)) {
      if (!['id', 'statement', 'gold'].includes(key)) problems.push(`${where}: ${key}: unknown field (expected id, statement, gold)`);
    }
    if (record.id !== undefined && (typeof record.id !== 'string' || record.id === '' || record.id.length > 500))
      problems.push(`${where}: id: expected a non-empty string of at most 500 characters`);
    for (const field of ['statement', 'gold'] as const) {
      const v = record[field];
      if (v === undefined) {
        if (field === 'statement') problems.push(`${where}: statement: missing`);
        continue;
      }
      if (typeof v !== 'string' || !/\S/.test(v)) problems.push(`${where}: ${field}: expected a non-empty string`);
      else if (v.length > maxStatementChars) problems.push(`${where}: ${field}: longer than ${maxStatementChars} characters`);
    }
    if (problems.length > before) return;
    items.push({
      ...(record.id !== undefined ? { id: record.id as string } : {}),
      statement: record.statement as string,
      ...(record.gold !== undefined ? { gold: record.gold as string } : {}),
    });
  });
  if (problems.length === 0 && items.length === 0) problems.push(`${file}: statements: the file has none`);
  if (items.length > MAX_CHECK_STATEMENTS)
    problems.push(`${file}:${lines.length}: statements: ${items.length} lines, at most ${MAX_CHECK_STATEMENTS} in one batch`);
  return { items, problems };
}

/** The line printed for one statement: its status and why (error, refusal, no Lean), time and memory. */
export function checkLine(index: number, result: CheckItemResult): string {
  const name = result.id ?? `#${index + 1}`;
  const firstError = result.messages.find((m) => m.severity === 'error');
  // A refusal the screen did not make is a hole found (decision 0017): said apart.
  const by = result.status === 'refused' && result.refusedBy;
  let line = `${name}: ${result.status}${by === 'tampering' ? ' for tampering' : by === 'disagreement' ? ' (screen/Lean disagreement)' : ''}`;
  if (result.equivalence?.refusedBy) line += `, not compared with gold (a check was refused for ${result.equivalence.refusedBy})`;
  else if (result.equivalence?.notComparable) line += ', not comparable with gold';
  else if (result.equivalent !== undefined) line += result.equivalent ? ', equivalent to gold' : ', not equivalent to gold';
  // Refused or skipped: say why (the screen's reason; no Lean configured).
  if ((result.status === 'refused' || result.status === 'skipped') && result.reason) line += ` (${result.reason})`;
  else if (result.error) line += ` (${result.error})`;
  else if (firstError) line += ` (${firstError.line}:${firstError.column}: ${firstError.text.split('\n')[0]})`;
  const memory = result.peakRssMb !== undefined ? `, peak ${result.peakRssMb} MB` : '';
  return `${line} [${result.durationMs} ms${memory}]`;
}

/** The batch's summary: every statement counted once, under one of its statuses. */
export function checksSummaryLine(s: ChecksSummaryCounts): string {
  return (
    `${s.total} checked: ${s.compiled} compiled, ${s.rejected} rejected by Lean, ${s.refused} refused by the screen, ${s.failed} failed` +
    (s.skipped ? `, ${s.skipped} not checked (no Lean configured)` : '') +
    (s.equivalent + s.notEquivalent ? `; ${s.equivalent} equivalent to gold, ${s.notEquivalent} not` : '')
  );
}

export async function checkCommand(file: string, opts: { json?: boolean }): Promise<void> {
  const cfg = config({ skipFileChecks: true });
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    fail(
      `cannot read check file ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory, not a file' : (err as Error).message}`,
    );
  }
  const { items, problems } = parseCheckFile(file, text, cfg.api.maxStatementChars);
  if (problems.length) fail(problems.join('\n'));
  const client = await connectClient(cfg).catch((err: Error) => fail(err.message));
  let code: number = EXIT.ok;
  try {
    const id = await startChecks(client, items);
    if (!opts.json) process.stderr.write(`checks ${id} started: ${items.length} statement(s)\n`);
    for await (const event of followChecks(client, id)) {
      if (event.type === 'check.finished') {
        if (!opts.json) console.log(checkLine(event.index >= 0 ? event.index : event.seq - 1, event.result));
      } else if (event.type === 'checks.completed') {
        if (!opts.json) console.log(checksSummaryLine(event.summary));
        code = checksExitCode(event.summary);
      } else {
        code = EXIT.failed;
        process.stderr.write(
          `checks ${id}: ${event.type === 'checks.canceled' ? 'canceled' : 'failed'}${event.error ? `: ${event.error}` : ''}\n`,
        );
      }
    }
    if (opts.json) {
      const view = await getChecks(client, id);
      console.log(JSON.stringify({ ...view, ...(view?.results ? { summary: summarizeChecks(view.results) } : {}) }, null, 2));
    }
  } finally {
    await client.connection.close().catch(() => undefined);
  }
  process.exitCode = code;
}
