// The LLM budget shared by every worker process, in the results database (SQLite in WAL mode on
// one machine, PostgreSQL across machines): one row per provider holding its state as JSON, read
// and written in one transaction (decisions/0016). On SQLite that transaction holds the file's
// write lock; on PostgreSQL it locks only the provider's row (`SELECT … FOR UPDATE`), so budget
// steps of different providers and the results' own writes do not wait for each other. The table
// is coordination state, not results: it is created here when first needed and may be dropped at
// any time (the budgets start again full, and the provider's headers correct them).
import { decodeState, encodeState, newBudgetState, type BudgetState, type BudgetStore } from '../llm/budget';
import type { SqlDriver } from './driver';

const CREATE = 'CREATE TABLE IF NOT EXISTS llm_budget (provider TEXT PRIMARY KEY, state TEXT NOT NULL)';

export class SqlBudgetStore implements BudgetStore {
  private ready: Promise<void> | undefined;
  /** One step at a time in this process: steps on one connection would otherwise share a
   * transaction and overwrite each other's state. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: SqlDriver,
    private readonly now: () => number = Date.now,
  ) {}

  private table(): Promise<void> {
    // Under the schema's lock: PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against a
    // second process creating the same table at the same moment. A failure is tried again next time.
    this.ready ??= this.db
      .transaction((tx) => tx.run(CREATE))
      .then(
        () => undefined,
        (err: unknown) => {
          this.ready = undefined;
          throw err;
        },
      );
    return this.ready;
  }

  update<T>(provider: string, step: (state: BudgetState, now: number) => T): Promise<T> {
    const run = this.queue.then(async () => {
      await this.table();
      const pg = this.db.dialect === 'postgres';
      const select = `SELECT state FROM llm_budget WHERE provider = ?${pg ? ' FOR UPDATE' : ''}`;
      return this.db.transaction(
        async (tx) => {
          let rows = await tx.all<{ state: string }>(select, [provider]);
          if (!rows[0] && pg) {
            // A provider's first step: whichever process inserts first wins, the other waits for
            // its commit and then locks the row it made.
            await tx.run('INSERT INTO llm_budget (provider, state) VALUES (?, ?) ON CONFLICT (provider) DO NOTHING', [
              provider,
              encodeState(newBudgetState(this.now())),
            ]);
            rows = await tx.all<{ state: string }>(select, [provider]);
          }
          const now = this.now();
          const state = rows[0] ? decodeState(rows[0].state, now) : newBudgetState(now);
          const result = step(state, now);
          if (rows[0]) await tx.run('UPDATE llm_budget SET state = ? WHERE provider = ?', [encodeState(state), provider]);
          else await tx.run('INSERT INTO llm_budget (provider, state) VALUES (?, ?)', [provider, encodeState(state)]);
          return result;
        },
        { schemaLock: false },
      );
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async states(): Promise<Map<string, BudgetState>> {
    await this.table();
    const rows = await this.db.all<{ provider: string; state: string }>('SELECT provider, state FROM llm_budget ORDER BY provider');
    const now = this.now();
    return new Map(rows.map((r) => [r.provider, decodeState(r.state, now)]));
  }
}
