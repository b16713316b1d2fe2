// Per-item views of sweep records: the unit every interval and paired test resamples. Pure.
import { ranRecord, type SweepRunRecord } from '../../common/sweep';

/** One item's runs in one group, sorted by sample. */
export interface ItemRuns {
  item: string;
  runs: SweepRunRecord[];
}

/** Groups records by item (items in first-seen order, runs by sample). */
export function byItem(records: readonly SweepRunRecord[]): ItemRuns[] {
  const map = new Map<string, SweepRunRecord[]>();
  for (const r of records) {
    const list = map.get(r.item);
    if (list) list.push(r);
    else map.set(r.item, [r]);
  }
  return [...map].map(([item, runs]) => ({ item, runs: runs.sort((a, b) => a.sample - b.sample) }));
}

/** The binary outcomes the rates count. A `failed` run (the child failed after the sweep's
 * retries) counts as a failure of every rate: the system did not deliver. */
export const SUCCESS = {
  typecheck: (r: SweepRunRecord) => r.outcome !== 'failed' && r.checked && r.compiled,
  beq: (r: SweepRunRecord) => r.outcome !== 'failed' && r.equivalent === true,
  faithful: (r: SweepRunRecord) => r.outcome !== 'failed' && r.faithful === true,
} as const;

export type RateName = keyof typeof SUCCESS;

/** Whether a rate is measurable in a group at all: Lean checked something (typecheck), an
 * equivalence check ran (BEq+), the judge ran (faithful). */
export const MEASURED: Record<RateName, (rs: readonly SweepRunRecord[]) => boolean> = {
  typecheck: (rs) => rs.some((r) => r.checked),
  beq: (rs) => rs.some((r) => r.equivalent !== null && r.equivalent !== undefined),
  faithful: (rs) => rs.some((r) => r.judgeGrade !== null && r.judgeGrade !== undefined),
};

/** Items a rate is computed over: BEq+ needs a gold statement (`hasGoldStatement: false`
 * leaves an item out); the other rates count every item. */
export function eligible(rate: RateName, item: ItemRuns): boolean {
  return rate !== 'beq' || item.runs.some((r) => r.hasGoldStatement !== false);
}

/** @1: the share of an item's samples that succeed (the unbiased one-sample estimate). */
export function at1(item: ItemRuns, ok: (r: SweepRunRecord) => boolean): number {
  return item.runs.length === 0 ? 0 : item.runs.filter(ok).length / item.runs.length;
}

/** @k: 1 when any of the item's samples succeeds. */
export function atK(item: ItemRuns, ok: (r: SweepRunRecord) => boolean): number {
  return item.runs.some(ok) ? 1 : 0;
}

/** The first sample's outcome, the binary @1 outcome McNemar compares. */
export function firstSample(item: ItemRuns, ok: (r: SweepRunRecord) => boolean): boolean {
  return item.runs.length > 0 && ok(item.runs[0]!);
}

/** Precision, recall and F1 of one run's retrieved premises against the gold ones. Precision
 * is hits over distinct retrieved names (0 when nothing was retrieved), as in
 * `driftline eval retrieval`. */
export function retrievalScores(r: SweepRunRecord): { hits: number; retrieved: number; gold: number; p: number; r: number; f1: number } {
  const gold = new Set(r.goldPremises);
  const got = new Set(r.premises);
  let hits = 0;
  for (const n of got) if (gold.has(n)) hits++;
  const p = got.size > 0 ? hits / got.size : 0;
  const rec = gold.size > 0 ? hits / gold.size : 0;
  return { hits, retrieved: got.size, gold: gold.size, p, r: rec, f1: p + rec > 0 ? (2 * p * rec) / (p + rec) : 0 };
}

/** Runs that say something about retrieval: runs that happened, with gold premises; a
 * predictions file's statements had no retrieval of driftline's to judge. */
export function retrievalRuns(item: ItemRuns): SweepRunRecord[] {
  return item.runs.filter((r) => ranRecord(r) && r.source !== 'predictions' && r.goldPremises.length > 0);
}
