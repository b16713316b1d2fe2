// Export of a sweep's runs: JSONL (one SweepRunRecord per line, as stored) and CSV (one row per
// run, the scalar fields plus lists joined by spaces and stage timings as columns). This CSV is
// the one per-run table: `sweep export --format csv`, the report's runs.csv and the API's
// report as text/csv.
import type { SweepRunRecord } from '../../common/sweep';
import { STAGE_NAMES } from '../../common/stages';

export function toJsonl(records: SweepRunRecord[]): string {
  return records.map((r) => `${JSON.stringify(r)}\n`).join('');
}

// prettier-ignore
export const CSV_COLUMNS = [
  'sweepId', 'config', 'configHash', 'item', 'sample', 'workflowId', 'outcome', 'compiled', 'checked', 'equivalent',
  'judgeGrade', 'faithful', 'repairRounds', 'attempts', 'premises', 'goldPremises', 'tags',
  ...STAGE_NAMES.map((s) => `ms_${s}`),
  'promptTokens', 'completionTokens', 'costUsd', 'cacheHits', 'cacheMisses', 'formalStatement', 'error', 'finishedAt',
  'sourceJudgeGrade', 'sourceFaithful', 'rescoreOf',
  // Last, so the columns before them keep their places: the `sweep retry` round that wrote the
  // row; the run's time over its stages, its tokens, why the screen refused it, its Temporal page.
  'retryRound', 'totalMs', 'totalTokens', 'refusal', 'temporalUrl',
  // Who refused a refused run when the screen did not (`tampering`, `disagreement`: a hole
  // found, decision 0017; empty: the screen), and an equivalence check that could not compare.
  'refusedBy', 'notComparable',
] as const;

/** RFC 4180: quote a field when it holds a comma, quote or line break; double the quotes. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function row(r: SweepRunRecord, runUrl?: (workflowId: string) => string): unknown[] {
  return [
    r.sweepId,
    r.config,
    r.configHash,
    r.item,
    r.sample,
    r.workflowId,
    r.outcome,
    r.compiled,
    r.checked,
    r.equivalent,
    r.judgeGrade,
    r.faithful,
    r.repairRounds,
    r.attempts.map((a) => (a.compiled ? 1 : 0)).join(' '),
    r.premises.join(' '),
    r.goldPremises.join(' '),
    Object.entries(r.tags)
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
    ...STAGE_NAMES.map((s) => r.stageMs[s]),
    r.usage?.promptTokens,
    r.usage?.completionTokens,
    r.usage?.costUsd,
    r.cache?.hits,
    r.cache?.misses,
    r.formalStatement,
    r.error,
    r.finishedAt,
    r.sourceJudgeGrade,
    r.sourceFaithful,
    r.rescoreOf,
    r.retryRound,
    Object.values(r.stageMs ?? {}).reduce<number>((a, x) => a + (x ?? 0), 0),
    r.usage?.totalTokens,
    r.refusal,
    runUrl?.(r.workflowId),
    r.outcome === 'refused' ? r.refusedBy : undefined,
    r.notComparable ? true : undefined,
  ];
}

/** The per-run CSV; `runUrl` fills the Temporal UI column (empty without it). */
export function toCsv(records: readonly SweepRunRecord[], runUrl?: (workflowId: string) => string): string {
  const lines = [CSV_COLUMNS.join(','), ...records.map((r) => row(r, runUrl).map(csvField).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}
