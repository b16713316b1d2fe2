// The results schema, by version. A database is brought up to the newest version in one
// transaction per step; versions already applied are never run again. Documented in docs/sweeps.md.
import { LLM_BATCH_SCHEMA } from './llm-batches';
import type { SqlDriver } from './driver';
import { LLM_LEDGER_BATCH_COLUMNS, LLM_LEDGER_SCHEMA } from './llm-ledger';

export interface Migration {
  version: number;
  description: string;
  statements: string[];
}

// Portable SQL only (SQLite and PostgreSQL): TEXT, INTEGER/BIGINT, JSON kept as TEXT.
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'sweeps, their items, one row per finished run, failed attempts',
    statements: [
      `CREATE TABLE sweeps (
        id TEXT PRIMARY KEY,
        library TEXT NOT NULL,
        index_version TEXT,
        leave_out TEXT NOT NULL,
        samples INTEGER NOT NULL,
        items INTEGER NOT NULL,
        cells TEXT NOT NULL,
        spec TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TABLE sweep_items (
        sweep_id TEXT NOT NULL,
        ord INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (sweep_id, ord)
      )`,
      `CREATE TABLE runs (
        workflow_id TEXT PRIMARY KEY,
        sweep_id TEXT NOT NULL,
        config TEXT NOT NULL,
        config_hash TEXT NOT NULL,
        item TEXT NOT NULL,
        sample INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        compiled INTEGER NOT NULL,
        record TEXT NOT NULL,
        finished_at TEXT NOT NULL
      )`,
      `CREATE UNIQUE INDEX runs_unit ON runs (sweep_id, config, item, sample)`,
      `CREATE TABLE run_failures (
        workflow_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        sweep_id TEXT NOT NULL,
        error TEXT NOT NULL,
        failed_at TEXT NOT NULL,
        PRIMARY KEY (workflow_id, attempt)
      )`,
    ],
  },
  {
    version: 2,
    description: 'the LLM reply cache (llm_replies) and the call ledger (llm_calls)',
    statements: LLM_LEDGER_SCHEMA,
  },
  {
    version: 3,
    description: "predictions configurations' statements, read from their files when the sweep started",
    statements: [
      `CREATE TABLE sweep_predictions (
        sweep_id TEXT NOT NULL,
        config TEXT NOT NULL,
        ord INTEGER NOT NULL,
        sample INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        statement TEXT NOT NULL,
        PRIMARY KEY (sweep_id, config, ord, sample)
      )`,
    ],
  },
  {
    version: 4,
    description: 'the sweep a rescore re-judged (sweeps.rescore_of; the judge choice is in its spec)',
    statements: ['ALTER TABLE sweeps ADD COLUMN rescore_of TEXT'],
  },
  {
    version: 5,
    description: 'runs.retry_round: the `driftline sweep retry` round that rewrote a failed run (0: never retried)',
    statements: ['ALTER TABLE runs ADD COLUMN retry_round INTEGER NOT NULL DEFAULT 0'],
  },
  {
    version: 6,
    description:
      'llm_calls.batch and llm_calls.cost_if_sync_usd: calls answered through a provider batch, and what each would have cost one at a time',
    statements: LLM_LEDGER_BATCH_COLUMNS,
  },
  {
    version: 7,
    description: "batch mode: each request collected for a provider batch, and the sweep's batches (llm_batch_requests, llm_batches)",
    statements: LLM_BATCH_SCHEMA,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Applies every migration newer than the database; returns the version it is at. */
export async function migrate(db: SqlDriver): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.run('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const rows = await tx.all<{ version: number }>('SELECT MAX(version) AS version FROM schema_version');
    const current = Number(rows[0]?.version ?? 0);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `the results database is at schema version ${current}, newer than this driftline knows (${SCHEMA_VERSION}); upgrade driftline`,
      );
    }
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      for (const sql of m.statements) await tx.run(sql);
      await tx.run('INSERT INTO schema_version (version) VALUES (?)', [m.version]);
    }
    return SCHEMA_VERSION;
  });
}
