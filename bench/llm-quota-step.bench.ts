// What the shared LLM budget costs per call (decisions/0016): one take and one settle, each a
// transaction on the results database, timed on SQLite (WAL, a temp file) and on PostgreSQL (a
// server of its own in a temp directory, fsync off as in the tests). Then on PostgreSQL with a
// second client writing results at the same time (batches of 200 rows, each a transaction under
// the schema's advisory lock, as createSweep and migrations take it): the budget's steps under the
// same lock (as before) and under the provider row's lock (as now); and the longest step while a
// sweep of 10,000 items is created (ResultsDb.createSweep, one transaction under the schema lock).
// `npx tsx bench/llm-quota-step.bench.ts [--calls N] [--json]`; skips PostgreSQL when its server
// binaries are not installed.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { settle, take, type ProviderLimits } from '../engines/llm/budget';
import type { SqlDriver } from '../engines/results/driver';
import { SqlBudgetStore } from '../engines/results/llm-budget';
import { ResultsDb } from '../engines/results/results-db';
import { openPostgres } from '../engines/results/postgres';
import { openSqlite } from '../engines/results/sqlite';
import { findPostgresBin, localPostgres } from '../infra/local-postgres';

const args = process.argv.slice(2);
const json = args.includes('--json');
const calls = Number(args[args.indexOf('--calls') + 1]) || 1000;
const LIMITS: ProviderLimits = { tokensPerMinute: 1e9, requestsPerMinute: 1e9, maxInFlight: 1e6 };

interface Figures {
  calls: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

async function measure(db: SqlDriver, provider: string): Promise<Figures> {
  const store = new SqlBudgetStore(db);
  const times: number[] = [];
  for (let i = 0; i < calls + 20; i++) {
    const t0 = performance.now();
    const r = await store.update(provider, (s, now) => take(s, LIMITS, { tokens: 1000, leaseMs: 60_000, id: `c${i}` }, now));
    if (!r.granted) throw new Error('the budget refused a call under limits it cannot reach');
    await store.update(provider, (s, now) =>
      settle(s, LIMITS, r.slot, { kind: 'answered', estimatedTokens: 1000, usedTokens: 800, headers: {} }, now),
    );
    // The first calls warm up connections and statements.
    if (i >= 20) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => round(times[Math.min(times.length - 1, Math.floor(q * times.length))]!);
  return { calls, meanMs: round(times.reduce((a, b) => a + b, 0) / times.length), p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** Results written under the schema's lock, one batch after another, until `stop`. */
async function writer(db: SqlDriver, run: string, stop: { done: boolean }): Promise<number> {
  await db.run('CREATE TABLE IF NOT EXISTS bench_rows (id TEXT PRIMARY KEY, data TEXT NOT NULL)');
  let batches = 0;
  while (!stop.done) {
    const rows = Array.from({ length: 200 }, (_, i) => [`${run}-${batches}-${i}`, 'x'.repeat(300)]);
    await db.transaction(async (tx) => {
      await tx.run(`INSERT INTO bench_rows (id, data) VALUES ${rows.map(() => '(?, ?)').join(', ')}`, rows.flat());
    });
    batches++;
  }
  return batches;
}

/** The longest budget step (take + settle) while a sweep of 10,000 items is created, and how long
 * the creation took. */
async function duringCreateSweep(
  db: ResultsDb,
  driver: SqlDriver,
  id: string,
): Promise<{ createMs: number; longestStepMs: number; steps: number }> {
  const store = new SqlBudgetStore(driver);
  const items = Array.from({ length: 10_000 }, (_, i) => ({
    id: `Bench.item_${i}`,
    informal: `Statement ${i} `.repeat(20),
    goldPremises: [],
    tags: {},
  }));
  let done = false;
  let longest = 0;
  let steps = 0;
  const stepping = (async () => {
    for (let i = 0; !done; i++) {
      const t0 = performance.now();
      const r = await store.update(id, (s, now) => take(s, LIMITS, { tokens: 1000, leaseMs: 60_000, id: `s${i}` }, now));
      if (r.granted)
        await store.update(id, (s, now) => settle(s, LIMITS, r.slot, { kind: 'answered', estimatedTokens: 1000, headers: {} }, now));
      longest = Math.max(longest, performance.now() - t0);
      steps++;
    }
  })();
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  await db.createSweep(
    {
      id,
      library: 'bench',
      indexVersion: null,
      leaveOut: 'item',
      samples: 1,
      items: items.length,
      cells: [{ name: 'drift', config: {}, hash: 'h' }],
      spec: {},
      createdAt: new Date().toISOString(),
    },
    items,
  );
  const createMs = performance.now() - t0;
  done = true;
  await stepping;
  return { createMs: round(createMs), longestStepMs: round(longest), steps };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const out: Record<string, unknown> = { load: loadavg()[0] };
const dir = mkdtempSync(join(tmpdir(), 'driftline-budget-bench-'));
try {
  const sqlite = openSqlite(join(dir, 'results.sqlite'));
  out.sqlite = await measure(sqlite, 'default');
  await sqlite.close();
  if (findPostgresBin()) {
    // A directory of its own: the server's user (as root: postgres) owns it.
    const pgDir = mkdtempSync(join(tmpdir(), 'driftline-budget-pg-'));
    const server = localPostgres({ dir: pgDir, port: await freePort(), user: 'driftline', durable: false });
    try {
      const pg = openPostgres(server.url);
      const results = openPostgres(server.url);
      out.postgres = await measure(pg, 'default');
      // With a writer of results beside it: the budget's steps under the schema's lock (every
      // transaction of this driver takes it, whatever it is asked), then under the row's lock.
      const schemaLocked: SqlDriver = { ...pg, transaction: (fn) => pg.transaction(fn) };
      for (const [name, db] of [
        ['postgresBesideWriterSchemaLock', schemaLocked],
        ['postgresBesideWriterRowLock', pg],
      ] as const) {
        const stop = { done: false };
        const writing = writer(results, name, stop);
        const figures = await measure(db, name);
        stop.done = true;
        out[name] = { ...figures, writerBatches: await writing };
      }
      await results.close();
      const db = await ResultsDb.open({ url: server.url, file: '' });
      for (const [name, driver] of [
        ['postgresDuringCreateSweepSchemaLock', schemaLocked],
        ['postgresDuringCreateSweepRowLock', pg],
      ] as const) {
        out[name] = await duringCreateSweep(db, driver, name);
      }
      await db.close();
      await pg.close();
    } finally {
      server.stop('immediate');
      rmSync(pgDir, { recursive: true, force: true });
    }
  } else {
    out.postgres = 'skipped: no PostgreSQL server binaries';
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
else {
  process.stdout.write(`budget take + settle per call (${calls} calls, load average ${loadavg()[0]!.toFixed(1)})\n`);
  for (const [name, v] of Object.entries(out)) {
    if (typeof v === 'object' && v) {
      if ('createMs' in v) {
        const c = v as { createMs: number; longestStepMs: number; steps: number };
        process.stdout.write(
          `  ${name.padEnd(36)} sweep created in ${c.createMs} ms · longest step ${c.longestStepMs} ms · ${c.steps} steps\n`,
        );
        continue;
      }
      const f = v as Figures & { writerBatches?: number };
      process.stdout.write(
        `  ${name.padEnd(36)} mean ${f.meanMs} ms · p50 ${f.p50Ms} ms · p99 ${f.p99Ms} ms${f.writerBatches !== undefined ? ` · writer batches ${f.writerBatches}` : ''}\n`,
      );
    } else if (name !== 'load') process.stdout.write(`  ${name}: ${String(v)}\n`);
  }
}
