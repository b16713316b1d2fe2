// Batch mode's records in the results database: every request a run handed to a batcher (its
// body, which batch carries it, its answer) and every batch submitted for a sweep. The batcher
// workflow holds which requests are collected and which batches are in flight; these rows hold
// what is too large for a workflow's history (bodies and replies) and what the status views and
// the report count. Every write is idempotent, so a retried activity changes nothing twice.
import { batchEnded, type BatchInFlight, type ProviderBatchStatus, type SweepBatchCounts } from '../../common/llm-batch';
import type { SqlDriver, SqlExecutor, SqlValue } from './driver';

export const LLM_BATCH_SCHEMA = [
  `CREATE TABLE llm_batch_requests (
    custom_id TEXT PRIMARY KEY,
    sweep_id TEXT NOT NULL,
    batcher TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    run_id TEXT NOT NULL,
    stage TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    batch_id TEXT,
    submissions INTEGER NOT NULL DEFAULT 0,
    reply TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`,
  'CREATE INDEX llm_batch_requests_sweep ON llm_batch_requests (sweep_id, state)',
  'CREATE INDEX llm_batch_requests_batch ON llm_batch_requests (batch_id)',
  `CREATE TABLE llm_batches (
    batch_id TEXT PRIMARY KEY,
    sweep_id TEXT NOT NULL,
    batcher TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    flush_id TEXT NOT NULL,
    status TEXT NOT NULL,
    requests INTEGER NOT NULL,
    resubmissions INTEGER NOT NULL,
    submitted_at TEXT NOT NULL,
    ended_at TEXT
  )`,
  'CREATE INDEX llm_batches_sweep ON llm_batches (sweep_id)',
];

/** Where a collected request stands.
 * - `collected`: waiting for the batcher's next batch (also after a failed line, to be sent again);
 * - `submitted`: in batch `batch_id` at the provider;
 * - `answered`: the batch's reply is in `reply`;
 * - `synchronous`: its resubmissions ran out; the waiting call sends it itself, one at a time;
 * - `withdrawn`: its run was cancelled; nobody waits for it. */
export type BatchRequestState = 'collected' | 'submitted' | 'answered' | 'synchronous' | 'withdrawn';

export interface CollectedRequest {
  customId: string;
  sweep: string;
  batcher: string;
  provider: string;
  model: string;
  runId: string;
  stage: string;
  /** The chat-completions request body, as JSON text. */
  body: string;
}

export interface BatchRequestRow {
  state: BatchRequestState;
  reply: string | null;
  error: string | null;
  submissions: number;
}

export interface SubmittedBatchRecord {
  batchId: string;
  sweep: string;
  batcher: string;
  provider: string;
  model: string;
  flushId: string;
  status: ProviderBatchStatus;
  /** ISO time. */
  submittedAt: string;
}

/** One ended line of a batch: its reply, or why it failed. */
export type BatchLineOutcome = { customId: string; ok: true; body: string } | { customId: string; ok: false; error: string };

const now = () => new Date().toISOString();

/** `?, ?, …` for n values. */
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** SQLite allows 999 parameters in older builds: long ID lists go in slices. */
function slices<T>(items: T[], size = 400): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export class SqlBatchStore {
  constructor(private readonly db: SqlDriver) {}

  /** Records a request once; a withdrawn one (its run was cancelled, then ran again) is collected again. */
  async collect(req: CollectedRequest): Promise<void> {
    const t = now();
    await this.db.run(
      `INSERT INTO llm_batch_requests (custom_id, sweep_id, batcher, provider, model, run_id, stage, body, state, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'collected', ?, ?)
       ON CONFLICT (custom_id) DO UPDATE SET state = 'collected', updated_at = excluded.updated_at
       WHERE llm_batch_requests.state = 'withdrawn'`,
      [req.customId, req.sweep, req.batcher, req.provider, req.model, req.runId, req.stage, req.body, t, t],
    );
  }

  async request(customId: string): Promise<BatchRequestRow | undefined> {
    const rows = await this.db.all<{ state: BatchRequestState; reply: string | null; error: string | null; submissions: number | string }>(
      'SELECT state, reply, error, submissions FROM llm_batch_requests WHERE custom_id = ?',
      [customId],
    );
    const r = rows[0];
    return r ? { state: r.state, reply: r.reply, error: r.error, submissions: Number(r.submissions) } : undefined;
  }

  /** The bodies of those requests that still wait for a batch (not answered, not gone
   * synchronous, not withdrawn, not in another batch), in the order asked. */
  async waitingBodies(customIds: string[]): Promise<Array<{ customId: string; body: string; submissions: number }>> {
    const found = new Map<string, { body: string; submissions: number }>();
    for (const part of slices(customIds)) {
      const rows = await this.db.all<{ custom_id: string; body: string; submissions: number | string }>(
        `SELECT custom_id, body, submissions FROM llm_batch_requests WHERE state = 'collected' AND custom_id IN (${marks(part.length)})`,
        part,
      );
      for (const r of rows) found.set(r.custom_id, { body: r.body, submissions: Number(r.submissions) });
    }
    return customIds.flatMap((id) => {
      const f = found.get(id);
      return f ? [{ customId: id, ...f }] : [];
    });
  }

  /** Records a batch the provider accepted and marks its requests submitted. Idempotent: a
   * retry after the first write finds the batch and the requests already there. */
  async submitted(batch: SubmittedBatchRecord, customIds: string[], resubmissions: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO llm_batches (batch_id, sweep_id, batcher, provider, model, flush_id, status, requests, resubmissions, submitted_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (batch_id) DO NOTHING`,
        [
          batch.batchId,
          batch.sweep,
          batch.batcher,
          batch.provider,
          batch.model,
          batch.flushId,
          batch.status,
          customIds.length,
          resubmissions,
          batch.submittedAt,
        ],
      );
      const t = now();
      for (const part of slices(customIds)) {
        await tx.run(
          `UPDATE llm_batch_requests SET state = 'submitted', batch_id = ?, submissions = submissions + 1, updated_at = ?
           WHERE state = 'collected' AND custom_id IN (${marks(part.length)})`,
          [batch.batchId, t, ...part],
        );
      }
    });
  }

  /** The provider's latest word on a batch. */
  async batchStatus(batchId: string, status: ProviderBatchStatus): Promise<void> {
    await this.db.run(`UPDATE llm_batches SET status = ?, ended_at = ? WHERE batch_id = ?`, [
      status,
      batchEnded(status) ? now() : null,
      batchId,
    ]);
  }

  /** Writes an ended batch's lines: replies are kept; failed lines go back to `collected` to be
   * sent again, or to `synchronous` when `giveUp` says their resubmissions ran out. Only lines
   * still submitted in this batch change, so writing the same batch twice changes nothing. */
  async ended(batchId: string, lines: BatchLineOutcome[], giveUp: (customId: string) => boolean): Promise<void> {
    await this.db.transaction(async (tx) => {
      const t = now();
      for (const line of lines) {
        const params: SqlValue[] = line.ok
          ? ['answered', line.body, null, t, line.customId, batchId]
          : [giveUp(line.customId) ? 'synchronous' : 'collected', null, line.error.slice(0, 500), t, line.customId, batchId];
        await tx.run(
          `UPDATE llm_batch_requests SET state = ?, reply = ?, error = ?, updated_at = ? WHERE custom_id = ? AND batch_id = ? AND state = 'submitted'`,
          params,
        );
      }
    });
  }

  /** A caller stopped waiting: what is not yet at the provider is withdrawn (a retry of its
   * activity may still want the answer of what is). */
  async withdraw(customIds: string[]): Promise<void> {
    await this.setState(customIds, 'withdrawn', "('collected')");
  }

  /** The batcher lets requests go, wherever they are: nobody waits for them (a cancelled sweep),
   * or their callers send them one at a time. */
  async release(customIds: string[], to: 'withdrawn' | 'synchronous'): Promise<void> {
    await this.setState(customIds, to, "('collected', 'submitted')");
  }

  private async setState(customIds: string[], to: BatchRequestState, from: string): Promise<void> {
    for (const part of slices(customIds)) {
      await this.db.run(
        `UPDATE llm_batch_requests SET state = ?, updated_at = ? WHERE state IN ${from} AND custom_id IN (${marks(part.length)})`,
        [to, now(), ...part],
      );
    }
  }

  /** The batch a flush already made and the requests it carries, if it made one. */
  async batchOfFlush(
    flushId: string,
  ): Promise<{ batchId: string; status: ProviderBatchStatus; customIds: string[]; resubmissions: number } | undefined> {
    const rows = await this.db.all<{ batch_id: string; status: ProviderBatchStatus; resubmissions: number | string }>(
      'SELECT batch_id, status, resubmissions FROM llm_batches WHERE flush_id = ?',
      [flushId],
    );
    const b = rows[0];
    if (!b) return undefined;
    const ids = await this.db.all<{ custom_id: string }>('SELECT custom_id FROM llm_batch_requests WHERE batch_id = ? ORDER BY custom_id', [
      b.batch_id,
    ]);
    return { batchId: b.batch_id, status: b.status, customIds: ids.map((r) => r.custom_id), resubmissions: Number(b.resubmissions) };
  }
}

/** A sweep's batch counts, for its status views and its report; all zero when it sent none. */
export async function sweepBatchCounts(db: SqlExecutor, sweep: string): Promise<SweepBatchCounts> {
  const batches = await db.all<{
    batch_id: string;
    provider: string;
    model: string;
    status: ProviderBatchStatus;
    requests: number | string;
    resubmissions: number | string;
    submitted_at: string;
  }>(
    'SELECT batch_id, provider, model, status, requests, resubmissions, submitted_at FROM llm_batches WHERE sweep_id = ? ORDER BY submitted_at',
    [sweep],
  );
  const sync = await db.all<{ n: number | string }>(
    "SELECT COUNT(*) AS n FROM llm_batch_requests WHERE sweep_id = ? AND state = 'synchronous'",
    [sweep],
  );
  const synchronous = Number(sync[0]?.n ?? 0);
  const inFlight: BatchInFlight[] = batches
    .filter((b) => !batchEnded(b.status))
    .map((b) => ({
      id: b.batch_id,
      provider: b.provider,
      model: b.model,
      status: b.status,
      requests: Number(b.requests),
      since: b.submitted_at,
    }));
  return {
    inFlight: inFlight.length,
    submitted: batches.length,
    completed: batches.filter((b) => b.status === 'completed').length,
    failed: batches.filter((b) => b.status === 'failed' || b.status === 'expired' || b.status === 'cancelled').length,
    requests: batches.reduce((n, b) => n + Number(b.requests), 0),
    resubmitted: batches.reduce((n, b) => n + Number(b.resubmissions), 0),
    synchronous,
    batches: inFlight,
  };
}
