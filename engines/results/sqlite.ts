// The embedded results store: one SQLite file (better-sqlite3) in the data directory. WAL mode
// and a busy timeout let the CLI read while a worker writes.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Row, SqlDriver, SqlExecutor, SqlValue } from './driver';

export function openSqlite(file: string): SqlDriver {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 10000');
  db.pragma('synchronous = NORMAL');
  const exec: SqlExecutor = {
    async run(sql: string, params: SqlValue[] = []) {
      const info = db.prepare(sql).run(...params);
      return { changes: info.changes };
    },
    async all<T = Row>(sql: string, params: SqlValue[] = []) {
      return db.prepare(sql).all(...params) as T[];
    },
  };
  let depth = 0;
  return {
    dialect: 'sqlite',
    ...exec,
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      // The executor is synchronous underneath, so nothing else interleaves on this connection;
      // BEGIN IMMEDIATE takes the file's write lock before the first read.
      if (depth > 0) return fn(exec);
      depth++;
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(exec);
        db.exec('COMMIT');
        return result;
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      } finally {
        depth--;
      }
    },
    async close() {
      db.close();
    },
  };
}
