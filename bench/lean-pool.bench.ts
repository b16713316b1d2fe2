// Checks per second through the REPL pool against one fresh REPL process per check, at pool
// sizes 1, 2 and 4 (the same number of checks in flight in both modes). With the fake REPL the
// costs are set to a real REPL's shape: importing the header takes seconds, a statement tens of
// milliseconds. With LEAN_REPL_CMD set, the same benchmark runs on that REPL.
//
//   npx tsx bench/lean-pool.bench.ts [--json]
import { ReplPool } from '../engines/lean/repl-pool';
import { fakeRepl } from '../test/fakes/fake-repl-harness';

const json = process.argv.includes('--json');
const SIZES = [1, 2, 4];
const HEADER_MS = 2000;
const BODY_MS = 30;

const realCmd = process.env.LEAN_REPL_CMD?.trim();
const fake = realCmd ? undefined : fakeRepl({ headerDelayMs: HEADER_MS, bodyDelayMs: BODY_MS });
const replCmd = realCmd ?? fake!.command;
const cwd = process.env.LEAN_REPL_CWD;
const header = realCmd ? (process.env.LEAN_HEADER ?? 'import Mathlib') : 'import Mathlib';
const statement = (i: number) => `theorem bench_${i} (n : ℕ) : n + ${i} = ${i} + n := by sorry`;
const settings = { replCmd, cwd, header, timeoutMs: 120_000, headerTimeoutMs: 900_000 };

/** Runs `total` checks with `concurrency` in flight; returns seconds taken. */
async function drive(total: number, concurrency: number, check: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await check(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

async function ok(p: Promise<{ status: string }>): Promise<void> {
  const result = await p;
  if (result.status !== 'ok') throw new Error(`benchmark check failed: ${JSON.stringify(result)}`);
}

interface Row {
  size: number;
  pool: { checks: number; seconds: number; checksPerSecond: number; warmSeconds: number };
  fresh: { checks: number; seconds: number; checksPerSecond: number };
  ratio: number;
}

const rows: Row[] = [];
for (const size of SIZES) {
  const pool = new ReplPool({ ...settings, size });
  const warmStart = performance.now();
  await pool.warm();
  const warmSeconds = (performance.now() - warmStart) / 1000;
  const poolChecks = realCmd ? 20 * size : 40 * size;
  const poolSeconds = await drive(poolChecks, size, (i) => ok(pool.check(statement(i))));
  await pool.close();

  const freshChecks = 2 * size;
  const freshSeconds = await drive(freshChecks, size, async (i) => {
    const single = new ReplPool({ ...settings, size: 1, eagerReplace: false });
    try {
      await ok(single.check(statement(i)));
    } finally {
      await single.close();
    }
  });
  const poolRate = poolChecks / poolSeconds;
  const freshRate = freshChecks / freshSeconds;
  rows.push({
    size,
    pool: { checks: poolChecks, seconds: round(poolSeconds), checksPerSecond: round(poolRate), warmSeconds: round(warmSeconds) },
    fresh: { checks: freshChecks, seconds: round(freshSeconds), checksPerSecond: round(freshRate) },
    ratio: round(poolRate / freshRate, 1),
  });
}
fake?.cleanup();

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

const repl = realCmd ? { kind: 'real', command: realCmd, header } : { kind: 'fake', headerMs: HEADER_MS, bodyMs: BODY_MS };
if (json) {
  process.stdout.write(
    `${JSON.stringify({ repl, sizes: rows, ratios: Object.fromEntries(rows.map((r) => [`size${r.size}`, r.ratio])) })}\n`,
  );
} else {
  console.log(
    realCmd ? `real REPL: ${realCmd} (header ${JSON.stringify(header)})` : `fake REPL: header ${HEADER_MS} ms, statement ${BODY_MS} ms`,
  );
  console.log('pool size | pool checks/s (warm-up s) | fresh process per check, checks/s | ratio');
  console.log('----------|---------------------------|-----------------------------------|------');
  for (const r of rows) {
    console.log(
      `${String(r.size).padStart(9)} | ${String(r.pool.checksPerSecond).padStart(12)} (${String(r.pool.warmSeconds).padStart(5)})       | ${String(r.fresh.checksPerSecond).padStart(33)} | ${String(r.ratio).padStart(5)}×`,
    );
  }
}
