// The shared results store: PostgreSQL through `pg`, for workers on several machines.
import pg from 'pg';
import type { Row, SqlDriver, SqlExecutor, SqlValue } from './driver';

/** `?` placeholders → `$1, $2, …` (our statements never contain a literal `?`). */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function executor(q: { query: pg.Pool['query'] } | pg.PoolClient): SqlExecutor {
  return {
    async run(sql: string, params: SqlValue[] = []) {
      const r = await q.query(numberPlaceholders(sql), params);
      return { changes: r.rowCount ?? 0 };
    },
    async all<T = Row>(sql: string, params: SqlValue[] = []) {
      const r = await q.query(numberPlaceholders(sql), params);
      return r.rows as T[];
    },
  };
}

export function openPostgres(url: string): SqlDriver {
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 10_000 });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return {
    dialect: 'postgres',
    ...executor(pool),
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>, options?: { schemaLock?: boolean }): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // One advisory lock for all writers of the schema, held to the end of the transaction.
        if (options?.schemaLock !== false) await client.query('SELECT pg_advisory_xact_lock(74211)');
        const result = await fn(executor(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
