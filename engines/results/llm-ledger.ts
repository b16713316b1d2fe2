// The LLM reply cache and the call ledger, in the results database beside the sweeps: replies by
// content key (written once; a second writer of the same key changes nothing) and one row per
// reply a run used, with its tokens, its price, whether it came from the cache, and whether it came
// through a provider batch (with what it would have cost sent one at a time).
import { randomUUID } from 'node:crypto';
import type { LlmCallRecord, ReplyLedger, StoredReply } from '../llm/metered-fetch';
import type { SqlExecutor } from './driver';

export interface LlmTotals {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** USD paid; undefined when a paid call's model has no price. */
  costUsd?: number;
  hits: number;
  misses: number;
}

/** What one run's LLM calls cost: paid, and had each been sent one at a time. */
export interface RunLlmCost {
  runId: string;
  calls: number;
  /** Calls answered through a provider batch. */
  batchCalls: number;
  /** Calls paid for (not from the cache) whose model has no price: the sums below leave them out. */
  unpricedCalls: number;
  /** USD paid for the priced calls. */
  costUsd: number;
  /** USD the priced calls would have cost sent one at a time. */
  costIfSyncUsd: number;
}

interface TotalsRow {
  calls: number | string | null;
  prompt: number | string | null;
  completion: number | string | null;
  cost: number | string | null;
  priced: number | string | null;
  paid: number | string | null;
  hits: number | string | null;
}

/** LIKE pattern for IDs starting with `prefix/` (escaping LIKE's own characters). */
function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`;
}

export class SqlReplyLedger implements ReplyLedger {
  constructor(private readonly db: SqlExecutor) {}

  async getReply(key: string): Promise<StoredReply | undefined> {
    const rows = await this.db.all<{ status: number | string; body: string }>('SELECT status, body FROM llm_replies WHERE reply_key = ?', [
      key,
    ]);
    const r = rows[0];
    return r ? { status: Number(r.status), body: r.body } : undefined;
  }

  async putReply(key: string, reply: StoredReply): Promise<void> {
    await this.db.run('INSERT INTO llm_replies (reply_key, status, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [
      key,
      reply.status,
      reply.body,
      new Date().toISOString(),
    ]);
  }

  async recordCall(call: LlmCallRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO llm_calls (id, run_id, stage, provider, model, reply_key, prompt_tokens, completion_tokens, cached_tokens, cost_usd, cache_hit, at,
                              batch, cost_if_sync_usd)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        randomUUID(),
        call.runId,
        call.stage,
        call.provider,
        call.model,
        call.key,
        call.usage.promptTokens,
        call.usage.completionTokens,
        call.usage.cachedTokens,
        call.costUsd ?? null,
        call.cacheHit ? 1 : 0,
        new Date().toISOString(),
        call.batch ? 1 : 0,
        call.costIfSyncUsd ?? null,
      ],
    );
  }

  private async totals(where: string, params: (string | number)[]): Promise<LlmTotals> {
    const rows = await this.db.all<TotalsRow>(
      `SELECT COUNT(*) AS calls, SUM(prompt_tokens) AS prompt, SUM(completion_tokens) AS completion,
              SUM(cost_usd) AS cost, SUM(CASE WHEN cache_hit = 0 AND cost_usd IS NOT NULL THEN 1 ELSE 0 END) AS priced,
              SUM(CASE WHEN cache_hit = 0 THEN 1 ELSE 0 END) AS paid, SUM(cache_hit) AS hits
       FROM llm_calls WHERE ${where}`,
      params,
    );
    const r = rows[0]!;
    const n = (v: unknown) => Number(v ?? 0);
    const promptTokens = n(r.prompt);
    const completionTokens = n(r.completion);
    const t: LlmTotals = {
      calls: n(r.calls),
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
      hits: n(r.hits),
      misses: n(r.paid),
    };
    if (n(r.priced) === n(r.paid)) t.costUsd = n(r.cost);
    return t;
  }

  /** What one run's LLM calls used and cost. */
  runTotals(runId: string): Promise<LlmTotals> {
    return this.totals('run_id = ?', [runId]);
  }

  /** Which provider and model answered each stage of a sweep's runs, with call counts: the
   * models the report names are the ones that were called, not the ones configured now. */
  async sweepModels(sweepId: string): Promise<{ stage: string; provider: string; model: string; calls: number; cacheHits: number }[]> {
    const rows = await this.db.all<{ stage: string | null; provider: string; model: string; calls: unknown; hits: unknown }>(
      `SELECT stage, provider, model, COUNT(*) AS calls, SUM(cache_hit) AS hits FROM llm_calls
       WHERE run_id LIKE ? ESCAPE '\\' GROUP BY stage, provider, model ORDER BY stage, provider, model`,
      [prefixPattern(sweepId)],
    );
    return rows.map((r) => ({
      stage: r.stage ?? 'unknown',
      provider: r.provider,
      model: r.model,
      calls: Number(r.calls ?? 0),
      cacheHits: Number(r.hits ?? 0),
    }));
  }

  /** What each run of a sweep cost, paid and had every call been sent one at a time (runs with
   * no calls are absent). */
  async sweepRunCosts(sweepId: string): Promise<RunLlmCost[]> {
    const rows = await this.db.all<{
      run_id: string;
      calls: unknown;
      batch: unknown;
      unpriced: unknown;
      cost: unknown;
      sync: unknown;
    }>(
      `SELECT run_id, COUNT(*) AS calls, SUM(batch) AS batch,
              SUM(CASE WHEN cache_hit = 0 AND cost_usd IS NULL THEN 1 ELSE 0 END) AS unpriced,
              SUM(cost_usd) AS cost, SUM(cost_if_sync_usd) AS sync
       FROM llm_calls WHERE run_id LIKE ? ESCAPE '\\' GROUP BY run_id ORDER BY run_id`,
      [prefixPattern(sweepId)],
    );
    const n = (v: unknown) => Number(v ?? 0);
    return rows.map((r) => ({
      runId: r.run_id,
      calls: n(r.calls),
      batchCalls: n(r.batch),
      unpricedCalls: n(r.unpriced),
      costUsd: n(r.cost),
      costIfSyncUsd: n(r.sync),
    }));
  }

  /** What every run of a sweep (IDs `<sweepId>/…`) used and cost. */
  sweepTotals(sweepId: string): Promise<LlmTotals> {
    return this.totals("run_id LIKE ? ESCAPE '\\'", [prefixPattern(sweepId)]);
  }
}

/** Migration statements for the ledger (results schema version 2). */
export const LLM_LEDGER_SCHEMA = [
  `CREATE TABLE llm_replies (
    reply_key TEXT PRIMARY KEY,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`,
  `CREATE TABLE llm_calls (
    id TEXT PRIMARY KEY,
    run_id TEXT,
    stage TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    reply_key TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    cost_usd DOUBLE PRECISION,
    cache_hit INTEGER NOT NULL,
    at TEXT NOT NULL
  )`,
  `CREATE INDEX llm_calls_run ON llm_calls (run_id)`,
];

/** Migration statements for batch calls (results schema version 6): which calls came through a
 * provider batch, and what each would have cost sent one at a time (for the calls recorded
 * before, all synchronous, what they cost). */
export const LLM_LEDGER_BATCH_COLUMNS = [
  'ALTER TABLE llm_calls ADD COLUMN batch INTEGER NOT NULL DEFAULT 0',
  'ALTER TABLE llm_calls ADD COLUMN cost_if_sync_usd DOUBLE PRECISION',
  'UPDATE llm_calls SET cost_if_sync_usd = cost_usd',
];
