// The embedded results store: one SQLite file (better-sqlite3) in the data directory. WAL mode
// and a busy timeout let the CLI read while a worker writes, and several workers share it.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Row, SqlDriver, SqlExecutor, SqlValue } from './driver';

/** How long a statement waits for another process's lock before "database is locked". */
const BUSY_TIMEOUT_MS = 10_000;

export function openSqlite(file: string): SqlDriver {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  if (file !== ':memory:') useWal(db);
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

/**
 * Puts the file in WAL mode. WAL is a property of the file, so after its first open there is
 * nothing to do and no lock is taken. Converting needs the file to itself, and SQLite does not
 * wait for that (no busy handler): two processes opening a new file at once (two workers on one
 * data directory) could fail with "database is locked". So it is retried within the busy timeout.
 */
function useWal(db: Database.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let pauseMs = 5; ; pauseMs = Math.min(pauseMs * 2, 200)) {
    if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal') return;
    try {
      // Answers the mode it could set (some file systems keep another): taken as it is.
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      // Opening is synchronous; a short blocking pause while another process converts the file.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pauseMs);
    }
  }
}
