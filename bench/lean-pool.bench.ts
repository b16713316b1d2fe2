// The REPL pool at its capacity, and what trust domains cost (docs/benchmarks.md, "Lean pool").
//
// 1. Capacity: with N REPLs and checks of a real REPL's cost shape (a header import of seconds,
//    a statement of B ms), do checks flow at N per check time? Checks/s against the ideal N / B,
//    at pool sizes 1, 2 and 4 and B = 100 and 300 ms, with N + 2 checks in flight (as the Lean
//    worker takes them: leanWorkerConcurrency). Goal: a ratio of at least 0.9.
// 2. Trust domains: the same pool (N = 2, B = 100 ms) with the checks spread round-robin over D
//    domains, against D = 1 measured in the same run: a domain that finds no process of its own
//    and no clean one has another domain's process killed and a fresh one import the header.
// 3. The pool against one fresh REPL per check (N = 1): what keeping REPLs warm buys.
//
// With LEAN_REPL_CMD set, parts 1 and 2 run on that REPL instead of the fake (B is then what
// the statement costs there; the ideal uses the mean check time measured one at a time).
//
//   npx tsx bench/lean-pool.bench.ts [--json]     (or: npm run bench lean-pool)
import { loadavg } from 'node:os';
import { ReplPool } from '../engines/lean/repl-pool';
import { fakeRepl, type FakeRepl } from '../test/fakes/fake-repl-harness';

const json = process.argv.includes('--json');
const SIZES = [1, 2, 4];
const BODY_MS = [100, 300];
const HEADER_MS = 2000;
const DOMAINS = [1, 2, 4];
const DOMAIN_POOL = 2;

const realCmd = process.env.LEAN_REPL_CMD?.trim();
const cwd = process.env.LEAN_REPL_CWD;
const header = realCmd ? (process.env.LEAN_HEADER ?? 'import Mathlib') : 'import Mathlib';
const statement = (i: number) => `theorem bench_${i} (n : ℕ) : n + ${i} = ${i} + n := by sorry`;
const fakes: FakeRepl[] = [];

function poolFor(size: number, bodyMs: number, extra: { eagerReplace?: boolean } = {}): ReplPool {
  let replCmd = realCmd;
  if (!replCmd) {
    const fake = fakeRepl({ headerDelayMs: HEADER_MS, bodyDelayMs: bodyMs });
    fakes.push(fake);
    replCmd = fake.command;
  }
  return new ReplPool({ replCmd, cwd, header, timeoutMs: 120_000, headerTimeoutMs: 900_000, size, ...extra });
}

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

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Seconds one check takes alone on a warm process (the real REPL's "check time"). */
async function checkSeconds(pool: ReplPool): Promise<number> {
  const n = 5;
  return (await drive(n, 1, (i) => ok(pool.check(statement(1000 + i))))) / n;
}

const load = [loadavg()[0]];

// ---- 1. capacity ----
interface CapacityRow {
  size: number;
  bodyMs: number;
  checks: number;
  seconds: number;
  checksPerSecond: number;
  ideal: number;
  ratio: number;
}
const capacity: CapacityRow[] = [];
for (const bodyMs of realCmd ? [0] : BODY_MS) {
  for (const size of SIZES) {
    const pool = poolFor(size, bodyMs);
    await pool.warm();
    const checkTime = realCmd ? await checkSeconds(pool) : bodyMs / 1000;
    const checks = 12 * size;
    const seconds = await drive(checks, size + 2, (i) => ok(pool.check(statement(i))));
    await pool.close();
    const rate = checks / seconds;
    const ideal = size / checkTime;
    capacity.push({
      size,
      bodyMs: realCmd ? round(checkTime * 1000, 0) : bodyMs,
      checks,
      seconds: round(seconds),
      checksPerSecond: round(rate),
      ideal: round(ideal),
      ratio: round(rate / ideal),
    });
  }
}
load.push(loadavg()[0]);

// ---- 2. trust domains ----
interface DomainRow {
  domains: number;
  checks: number;
  seconds: number;
  checksPerSecond: number;
  /** Processes killed to serve another domain. */
  recycled: number;
  /** Against one domain, same run. */
  ratio: number;
}
const domainRows: DomainRow[] = [];
for (const domains of DOMAINS) {
  const pool = poolFor(DOMAIN_POOL, 100);
  await pool.warm();
  const checks = 16;
  const seconds = await drive(checks, DOMAIN_POOL + 2, (i) => ok(pool.check(statement(i), { domain: `bench:${i % domains}` })));
  const recycled = pool.stats().retired.domain;
  await pool.close();
  const rate = checks / seconds;
  domainRows.push({
    domains,
    checks,
    seconds: round(seconds),
    checksPerSecond: round(rate),
    recycled,
    ratio: round(rate / (domainRows[0]?.checksPerSecond ?? rate)),
  });
}
load.push(loadavg()[0]);

// ---- 3. pool against a fresh REPL per check ----
const freshBody = realCmd ? 0 : 100;
const warmPool = poolFor(1, freshBody);
await warmPool.warm();
const pooledSeconds = await drive(10, 1, (i) => ok(warmPool.check(statement(i))));
await warmPool.close();
const freshSeconds = await drive(2, 1, async (i) => {
  const single = poolFor(1, freshBody, { eagerReplace: false });
  try {
    await ok(single.check(statement(i)));
  } finally {
    await single.close();
  }
});
const fresh = {
  pooledChecksPerSecond: round(10 / pooledSeconds),
  freshChecksPerSecond: round(2 / freshSeconds),
  ratio: round(10 / pooledSeconds / (2 / freshSeconds), 1),
};
load.push(loadavg()[0]);
for (const f of fakes) f.cleanup();

const repl = realCmd ? { kind: 'real', command: realCmd, header } : { kind: 'fake', headerMs: HEADER_MS };
const loadAverage = load.map((l) => round(l!, 1));
if (json) {
  process.stdout.write(
    `${JSON.stringify({
      repl,
      loadAverage,
      capacity,
      domains: domainRows,
      fresh,
      ratios: {
        ...Object.fromEntries(capacity.map((r) => [`capacity_n${r.size}_b${r.bodyMs}`, r.ratio])),
        ...Object.fromEntries(domainRows.map((r) => [`domains${r.domains}`, r.ratio])),
        poolVsFresh: fresh.ratio,
      },
    })}\n`,
  );
} else {
  console.log(realCmd ? `real REPL: ${realCmd} (header ${JSON.stringify(header)})` : `fake REPL: header ${HEADER_MS} ms`);
  console.log(`load average (1 min) at start and after each part: ${loadAverage.join(', ')}`);
  console.log('\n1. capacity: checks/s against N / check time (N + 2 checks in flight)');
  console.log('pool size | check ms | checks | checks/s | ideal | ratio');
  console.log('----------|----------|--------|----------|-------|------');
  for (const r of capacity)
    console.log(
      `${String(r.size).padStart(9)} | ${String(r.bodyMs).padStart(8)} | ${String(r.checks).padStart(6)} | ${String(r.checksPerSecond).padStart(8)} | ${String(r.ideal).padStart(5)} | ${r.ratio}`,
    );
  console.log(`\n2. trust domains: pool of ${DOMAIN_POOL}, 100 ms checks spread round-robin over D domains`);
  console.log('domains | checks/s | processes recycled | against 1 domain');
  console.log('--------|----------|--------------------|-----------------');
  for (const r of domainRows)
    console.log(
      `${String(r.domains).padStart(7)} | ${String(r.checksPerSecond).padStart(8)} | ${String(r.recycled).padStart(18)} | ${r.ratio}×`,
    );
  console.log(
    `\n3. one warm REPL: ${fresh.pooledChecksPerSecond} checks/s; a fresh REPL per check: ${fresh.freshChecksPerSecond} checks/s (${fresh.ratio}×)`,
  );
}
