// The results database: sweeps, their items, and one row per finished run, written once and
// keyed by the run's workflow ID. The same code runs on SQLite and PostgreSQL (driver.ts).
import { join } from 'node:path';
import type { BenchmarkItem, LeaveOutPolicy, SweepCell, SweepRunRecord, UnitPrediction } from '../../common/sweep';
import type { SqlDriver } from './driver';
import { migrate } from './migrations';
import { openPostgres } from './postgres';
import { openSqlite } from './sqlite';

export interface SweepRow {
  id: string;
  library: string;
  indexVersion: string | null;
  leaveOut: LeaveOutPolicy;
  samples: number;
  /** Number of items. */
  items: number;
  cells: SweepCell[];
  /** The validated sweep file, as started (a rescore's: the source's, with `rescore`). */
  spec: unknown;
  createdAt: string;
  /** A rescore: the sweep it re-judged. */
  rescoreOf?: string | null;
}

export interface RunFailure {
  workflowId: string;
  attempt: number;
  error: string;
  failedAt: string;
}

export interface ResultsLocation {
  /** `postgres://…`: the shared database; unset: SQLite at `file`. */
  url?: string;
  file: string;
}

/** Where results live by configuration: PostgreSQL at DRIFTLINE_RESULTS_URL, else
 * `<dataDir>/results.sqlite`. */
export function resultsLocation(dataDir: string, url?: string): ResultsLocation {
  return { ...(url ? { url } : {}), file: join(dataDir, 'results.sqlite') };
}

interface SweepDbRow {
  id: string;
  library: string;
  index_version: string | null;
  leave_out: string;
  samples: number;
  items: number;
  cells: string;
  spec: string;
  created_at: string;
  rescore_of?: string | null;
}

function toSweep(r: SweepDbRow): SweepRow {
  return {
    id: r.id,
    library: r.library,
    indexVersion: r.index_version,
    leaveOut: r.leave_out as LeaveOutPolicy,
    samples: Number(r.samples),
    items: Number(r.items),
    cells: JSON.parse(r.cells) as SweepCell[],
    spec: JSON.parse(r.spec),
    createdAt: r.created_at,
    ...(r.rescore_of ? { rescoreOf: r.rescore_of } : {}),
  };
}

export class ResultsDb {
  private constructor(readonly driver: SqlDriver) {}

  /** Opens (and migrates) the configured database. */
  static async open(location: ResultsLocation): Promise<ResultsDb> {
    const driver = location.url ? openPostgres(location.url) : openSqlite(location.file);
    try {
      await migrate(driver);
    } catch (err) {
      await driver.close().catch(() => undefined);
      const where = location.url ? 'the PostgreSQL results database (DRIFTLINE_RESULTS_URL)' : location.file;
      throw new Error(`cannot open ${where}: ${(err as Error).message}`);
    }
    return new ResultsDb(driver);
  }

  get dialect(): SqlDriver['dialect'] {
    return this.driver.dialect;
  }

  /** Records a new sweep, its items and the statements of its predictions configurations (by
   * configuration name: item id, sample, statement), in one transaction; a sweep that exists
   * already is left as it is and returned (starting an existing ID answers with the existing
   * sweep). */
  async createSweep(
    sweep: SweepRow,
    items: BenchmarkItem[],
    predictions: ReadonlyMap<string, readonly { item: string; sample: number; statement: string }[]> = new Map(),
  ): Promise<{ created: boolean; sweep: SweepRow }> {
    return this.driver.transaction(async (tx) => {
      const existing = await tx.all<SweepDbRow>('SELECT * FROM sweeps WHERE id = ?', [sweep.id]);
      if (existing[0]) return { created: false, sweep: toSweep(existing[0]) };
      await tx.run(
        'INSERT INTO sweeps (id, library, index_version, leave_out, samples, items, cells, spec, created_at, rescore_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          sweep.id,
          sweep.library,
          sweep.indexVersion,
          sweep.leaveOut,
          sweep.samples,
          items.length,
          JSON.stringify(sweep.cells),
          JSON.stringify(sweep.spec),
          sweep.createdAt,
          sweep.rescoreOf ?? null,
        ],
      );
      // Batched inserts: a few hundred items per statement.
      for (let i = 0; i < items.length; i += 200) {
        const chunk = items.slice(i, i + 200);
        await tx.run(
          `INSERT INTO sweep_items (sweep_id, ord, item_id, data) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}`,
          chunk.flatMap((item, j) => [sweep.id, i + j, item.id, JSON.stringify(item)]),
        );
      }
      const ordOf = new Map(items.map((item, i) => [item.id, i]));
      for (const [config, entries] of predictions) {
        const rows = entries.filter((e) => ordOf.has(e.item));
        for (let i = 0; i < rows.length; i += 200) {
          const chunk = rows.slice(i, i + 200);
          await tx.run(
            `INSERT INTO sweep_predictions (sweep_id, config, ord, sample, item_id, statement) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
            chunk.flatMap((e) => [sweep.id, config, ordOf.get(e.item)!, e.sample, e.item, e.statement]),
          );
        }
      }
      return { created: true, sweep: { ...sweep, items: items.length } };
    });
  }

  async getSweep(id: string): Promise<SweepRow | null> {
    const rows = await this.driver.all<SweepDbRow>('SELECT * FROM sweeps WHERE id = ?', [id]);
    return rows[0] ? toSweep(rows[0]) : null;
  }

  async listSweeps(): Promise<SweepRow[]> {
    const rows = await this.driver.all<SweepDbRow>('SELECT * FROM sweeps ORDER BY created_at DESC, id');
    return rows.map(toSweep);
  }

  /** Records the index version a sweep was pinned to (the first writer wins). */
  async setIndexVersion(id: string, version: string): Promise<string> {
    await this.driver.run('UPDATE sweeps SET index_version = ? WHERE id = ? AND index_version IS NULL', [version, id]);
    const sweep = await this.getSweep(id);
    return sweep?.indexVersion ?? version;
  }

  /** Items `from` … `from + count − 1` in sweep order. */
  async items(sweepId: string, from = 0, count = 1_000_000): Promise<BenchmarkItem[]> {
    const rows = await this.driver.all<{ data: string }>(
      'SELECT data FROM sweep_items WHERE sweep_id = ? AND ord >= ? AND ord < ? ORDER BY ord',
      [sweepId, from, from + count],
    );
    return rows.map((r) => JSON.parse(r.data) as BenchmarkItem);
  }

  /** The stored predictions of a configuration for items `from` … `from + count − 1` (sweep
   * order), every sample, by item then sample. */
  async predictions(sweepId: string, config: string, from = 0, count = 1_000_000): Promise<UnitPrediction[]> {
    const rows = await this.driver.all<{ ord: number | string; sample: number | string; statement: string }>(
      'SELECT ord, sample, statement FROM sweep_predictions WHERE sweep_id = ? AND config = ? AND ord >= ? AND ord < ? ORDER BY ord, sample',
      [sweepId, config, from, from + count],
    );
    return rows.map((r) => ({ ord: Number(r.ord), sample: Number(r.sample), statement: r.statement }));
  }

  /** Writes a finished run once: a second write of the same workflow ID (a retried activity)
   * or of the same (config, item, sample) changes nothing. Returns whether it was new. */
  async recordRun(record: SweepRunRecord): Promise<boolean> {
    const r = await this.driver.run(
      `INSERT INTO runs (workflow_id, sweep_id, config, config_hash, item, sample, outcome, compiled, record, finished_at, retry_round)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [
        record.workflowId,
        record.sweepId,
        record.config,
        record.configHash,
        record.item,
        record.sample,
        record.outcome,
        record.compiled ? 1 : 0,
        JSON.stringify(record),
        record.finishedAt,
        record.retryRound ?? 0,
      ],
    );
    return r.changes > 0;
  }

  /** Writes the record of a unit run again by `driftline sweep retry` round `record.retryRound`
   * in place of its failed one: one row per unit stays. Only a failed row of an earlier round is
   * replaced, so a repeated write (a retried activity) changes nothing; a unit with no row yet
   * gets one. Returns whether the row changed. */
  async replaceFailedRun(record: SweepRunRecord & { retryRound: number }): Promise<boolean> {
    const r = await this.driver.run(
      `UPDATE runs SET outcome = ?, compiled = ?, config_hash = ?, record = ?, finished_at = ?, retry_round = ?
       WHERE workflow_id = ? AND outcome = 'failed' AND retry_round < ?`,
      [
        record.outcome,
        record.compiled ? 1 : 0,
        record.configHash,
        JSON.stringify(record),
        record.finishedAt,
        record.retryRound,
        record.workflowId,
        record.retryRound,
      ],
    );
    if (r.changes > 0) return true;
    return this.recordRun(record);
  }

  /** The failed runs of a sweep (their records), by configuration, item and sample. */
  async failedRuns(sweepId: string): Promise<SweepRunRecord[]> {
    const rows = await this.driver.all<{ record: string }>(
      `SELECT record FROM runs WHERE sweep_id = ? AND outcome = 'failed' ORDER BY config, item, sample`,
      [sweepId],
    );
    return rows.map((r) => JSON.parse(r.record) as SweepRunRecord);
  }

  /** The newest `driftline sweep retry` round that wrote a record of the sweep (0: none). */
  async lastRetryRound(sweepId: string): Promise<number> {
    const rows = await this.driver.all<{ round: number | string | null }>('SELECT MAX(retry_round) AS round FROM runs WHERE sweep_id = ?', [
      sweepId,
    ]);
    return Number(rows[0]?.round ?? 0);
  }

  async getRun(workflowId: string): Promise<SweepRunRecord | null> {
    const rows = await this.driver.all<{ record: string }>('SELECT record FROM runs WHERE workflow_id = ?', [workflowId]);
    return rows[0] ? (JSON.parse(rows[0].record) as SweepRunRecord) : null;
  }

  /** Every finished run of a sweep, by configuration, item and sample. */
  async runs(sweepId: string, config?: string): Promise<SweepRunRecord[]> {
    const rows = config
      ? await this.driver.all<{ record: string }>(
          'SELECT record FROM runs WHERE sweep_id = ? AND config = ? ORDER BY config, item, sample',
          [sweepId, config],
        )
      : await this.driver.all<{ record: string }>('SELECT record FROM runs WHERE sweep_id = ? ORDER BY config, item, sample', [sweepId]);
    return rows.map((r) => JSON.parse(r.record) as SweepRunRecord);
  }

  /** Finished and failed runs per configuration, and those run again by `driftline sweep retry`. */
  async counts(sweepId: string): Promise<Record<string, { done: number; failed: number; retried: number }>> {
    const rows = await this.driver.all<{ config: string; done: number | string; failed: number | string; retried: number | string }>(
      `SELECT config, COUNT(*) AS done, SUM(CASE WHEN outcome = 'failed' THEN 1 ELSE 0 END) AS failed,
         SUM(CASE WHEN retry_round > 0 THEN 1 ELSE 0 END) AS retried FROM runs WHERE sweep_id = ? GROUP BY config`,
      [sweepId],
    );
    return Object.fromEntries(
      rows.map((r) => [r.config, { done: Number(r.done), failed: Number(r.failed ?? 0), retried: Number(r.retried ?? 0) }]),
    );
  }

  /** Notes a failed attempt of a child (once per workflow ID and attempt). */
  async recordFailure(sweepId: string, workflowId: string, attempt: number, error: string): Promise<void> {
    await this.driver.run(
      'INSERT INTO run_failures (workflow_id, attempt, sweep_id, error, failed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [workflowId, attempt, sweepId, error, new Date().toISOString()],
    );
  }

  async failures(sweepId: string): Promise<RunFailure[]> {
    const rows = await this.driver.all<{ workflow_id: string; attempt: number; error: string; failed_at: string }>(
      'SELECT workflow_id, attempt, error, failed_at FROM run_failures WHERE sweep_id = ? ORDER BY workflow_id, attempt',
      [sweepId],
    );
    return rows.map((r) => ({ workflowId: r.workflow_id, attempt: Number(r.attempt), error: r.error, failedAt: r.failed_at }));
  }

  async close(): Promise<void> {
    await this.driver.close();
  }
}
