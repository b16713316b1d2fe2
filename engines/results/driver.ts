// The little SQL both result stores need: statements with `?` placeholders, rows as plain
// objects, transactions. SQLite and PostgreSQL each implement it (sqlite.ts, postgres.ts).
export type SqlValue = string | number | null;
export type Row = Record<string, unknown>;

export interface SqlExecutor {
  run(sql: string, params?: SqlValue[]): Promise<{ changes: number }>;
  all<T = Row>(sql: string, params?: SqlValue[]): Promise<T[]>;
}

export interface SqlDriver extends SqlExecutor {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `fn` in one transaction that holds the database's write lock from the start, so
   * two processes migrating at once take turns. `schemaLock: false` (PostgreSQL): the
   * transaction locks only the rows it selects `FOR UPDATE`, so it does not queue behind other
   * writers (SQLite has one write lock for the file, taken either way). */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>, options?: { schemaLock?: boolean }): Promise<T>;
  close(): Promise<void>;
}
