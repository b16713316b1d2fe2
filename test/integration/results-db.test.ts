// One contract for the results database, run on the embedded SQLite store and on a PostgreSQL
// server started for the suite: schema migration, sweeps and items, write-once runs, counts,
// failures, export.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchmarkItem, SweepRunRecord } from '../../common/sweep';
import { ResultsDb, type SweepRow } from '../../engines/results/results-db';
import { migrate, MIGRATIONS, SCHEMA_VERSION } from '../../engines/results/migrations';
import { numberPlaceholders, openPostgres } from '../../engines/results/postgres';
import { openSqlite } from '../../engines/results/sqlite';
import type { SqlDriver } from '../../engines/results/driver';
import { SqlReplyLedger } from '../../engines/results/llm-ledger';
import { csvField, toCsv, toJsonl } from '../../engines/results/export';
import { startPostgres, type TestPostgres } from '../helpers/postgres';

const ITEMS: BenchmarkItem[] = Array.from({ length: 450 }, (_, i) => ({
  id: `Demo.item_${i}`,
  informal: `Statement number ${i}, with "quotes", commas and a line\nbreak.`,
  goldPremises: i % 2 ? ['Nat.Prime'] : [],
  tags: { split: 'dev', source: i < 200 ? 'A' : 'B' },
}));

function sweepRow(id: string): SweepRow {
  return {
    id,
    library: 'mini',
    indexVersion: null,
    leaveOut: 'item',
    samples: 1,
    items: ITEMS.length,
    cells: [
      { name: 'drift', config: {}, hash: 'h1' },
      { name: 'none', config: { retrieval: 'none' }, hash: 'h2' },
    ],
    spec: { note: 'as started' },
    createdAt: new Date().toISOString(),
  };
}

function record(
  sweepId: string,
  config: string,
  item: string,
  sample: number,
  outcome: SweepRunRecord['outcome'] = 'faithful',
): SweepRunRecord {
  return {
    sweepId,
    config,
    configHash: 'h1',
    item,
    sample,
    workflowId: `${sweepId}/${config}/${item}/${sample}`,
    outcome,
    compiled: outcome !== 'failed' && outcome !== 'not-compiled',
    checked: true,
    equivalent: null,
    judgeGrade: outcome === 'faithful' ? 10 : null,
    faithful: outcome === 'faithful',
    attempts: [{ round: 0, compiled: true }],
    repairRounds: 0,
    premises: ['Nat.Prime'],
    goldPremises: ['Nat.Prime'],
    tags: { split: 'dev' },
    stageMs: { formalize: 12, compile: 3 },
    formalStatement: 'theorem x : True := by sorry',
    ...(outcome === 'failed' ? { error: 'boom, "quoted"' } : {}),
    finishedAt: '2026-11-30T07:00:00.000Z',
  };
}

/** `open`: the suite's database; `openEmpty`: a new, empty database of the same kind, unmigrated. */
function contract(name: string, open: () => Promise<ResultsDb>, openEmpty: (label: string) => Promise<SqlDriver>) {
  describe(`results database: ${name}`, () => {
    let db: ResultsDb;
    beforeAll(async () => {
      db = await open();
    });
    afterAll(async () => {
      await db?.close();
    });

    it('migrates to the newest schema, and opening again changes nothing', async () => {
      const again = await open();
      const rows = await again.driver.all<{ version: number }>('SELECT version FROM schema_version ORDER BY version');
      expect(rows.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
      expect(SCHEMA_VERSION).toBe(MIGRATIONS.at(-1)!.version);
      await again.close();
    });

    it('stores a sweep and its items in order, once', async () => {
      const first = await db.createSweep(sweepRow('s1'), ITEMS);
      expect(first.created).toBe(true);
      const second = await db.createSweep({ ...sweepRow('s1'), library: 'other' }, ITEMS.slice(0, 3));
      expect(second).toMatchObject({ created: false, sweep: { id: 's1', library: 'mini', items: 450 } });
      expect((await db.getSweep('s1'))!.cells.map((c) => c.name)).toEqual(['drift', 'none']);
      expect((await db.getSweep('s1'))!.spec).toEqual({ note: 'as started' });
      const page = await db.items('s1', 199, 3);
      expect(page.map((i) => i.id)).toEqual(['Demo.item_199', 'Demo.item_200', 'Demo.item_201']);
      expect(page[0]).toEqual(ITEMS[199]);
      expect(await db.items('s1', 449, 100)).toHaveLength(1);
      expect(await db.getSweep('nope')).toBeNull();
      expect((await db.listSweeps()).map((s) => s.id)).toContain('s1');
    });

    it("stores a predictions configuration's statements with the sweep, read a page of items at a time", async () => {
      const entries = ITEMS.slice(0, 300).flatMap((item, i) =>
        i % 3 === 2
          ? [] // every third item missing from the file
          : [
              { item: item.id, sample: 0, statement: `theorem t${i} : True := by sorry -- "quoted", ${i}` },
              { item: item.id, sample: 1, statement: `theorem u${i} : True := by sorry` },
            ],
      );
      // A line naming an item outside the sweep is not stored.
      entries.push({ item: 'Elsewhere.x', sample: 0, statement: 'theorem e : True := by sorry' });
      expect((await db.createSweep(sweepRow('sp'), ITEMS, new Map([['herald', entries]]))).created).toBe(true);
      // A second start of the same sweep leaves its statements as they were.
      await db.createSweep(sweepRow('sp'), ITEMS, new Map([['herald', entries.slice(0, 1)]]));
      const page = await db.predictions('sp', 'herald', 0, 3);
      expect(page).toEqual([
        { ord: 0, sample: 0, statement: 'theorem t0 : True := by sorry -- "quoted", 0' },
        { ord: 0, sample: 1, statement: 'theorem u0 : True := by sorry' },
        { ord: 1, sample: 0, statement: 'theorem t1 : True := by sorry -- "quoted", 1' },
        { ord: 1, sample: 1, statement: 'theorem u1 : True := by sorry' },
      ]);
      expect(await db.predictions('sp', 'herald')).toHaveLength(400);
      expect(await db.predictions('sp', 'drift')).toEqual([]);
      expect(await db.predictions('s-none', 'herald')).toEqual([]);
    });

    it('writes a run once, keyed by workflow ID, and once per (config, item, sample)', async () => {
      const r = record('s1', 'drift', 'Demo.item_1', 0);
      expect(await db.recordRun(r)).toBe(true);
      expect(await db.recordRun({ ...r, outcome: 'unfaithful' })).toBe(false);
      // Another workflow ID for the same unit is refused too.
      expect(await db.recordRun({ ...r, workflowId: 'other-id' })).toBe(false);
      expect(await db.getRun(r.workflowId)).toEqual(r);
      await db.recordRun(record('s1', 'drift', 'Demo.item_2', 0, 'failed'));
      await db.recordRun(record('s1', 'none', 'Demo.item_1', 0, 'not-compiled'));
      expect(await db.counts('s1')).toEqual({ drift: { done: 2, failed: 1, retried: 0 }, none: { done: 1, failed: 0, retried: 0 } });
      expect((await db.runs('s1')).map((x) => x.workflowId)).toEqual([
        's1/drift/Demo.item_1/0',
        's1/drift/Demo.item_2/0',
        's1/none/Demo.item_1/0',
      ]);
      expect(await db.runs('s1', 'none')).toHaveLength(1);
    });

    it('notes failed attempts once each', async () => {
      await db.recordFailure('s1', 's1/drift/Demo.item_2/0', 1, 'first');
      await db.recordFailure('s1', 's1/drift/Demo.item_2/0', 1, 'first again');
      await db.recordFailure('s1', 's1/drift/Demo.item_2/0', 2, 'second');
      expect((await db.failures('s1')).map((f) => [f.attempt, f.error])).toEqual([
        [1, 'first'],
        [2, 'second'],
      ]);
    });

    it('replaces a failed run in place for a retry round, once per round, and never a run that did not fail', async () => {
      const failed = record('s1', 'none', 'Demo.item_7', 0, 'failed');
      await db.recordRun(failed);
      expect((await db.failedRuns('s1')).map((r) => r.workflowId)).toEqual(['s1/drift/Demo.item_2/0', failed.workflowId]);
      expect(await db.lastRetryRound('s1')).toBe(0);
      // Round 1 fails again: the failed row is rewritten (new error, round 1); a second write of
      // round 1 (a retried activity) changes nothing.
      expect(await db.replaceFailedRun({ ...failed, error: 'again', retryRound: 1 })).toBe(true);
      expect(await db.replaceFailedRun({ ...failed, error: 'a third time', retryRound: 1 })).toBe(false);
      expect(await db.getRun(failed.workflowId)).toMatchObject({ outcome: 'failed', error: 'again', retryRound: 1 });
      // Round 2 succeeds: still one row for the unit, now compiled.
      const ok = { ...record('s1', 'none', 'Demo.item_7', 0, 'compiled'), retryRound: 2 };
      expect(await db.replaceFailedRun(ok)).toBe(true);
      expect(await db.replaceFailedRun({ ...ok, outcome: 'faithful', retryRound: 3 })).toBe(false);
      expect(await db.getRun(failed.workflowId)).toEqual(ok);
      expect((await db.runs('s1', 'none')).filter((r) => r.item === 'Demo.item_7')).toHaveLength(1);
      expect(await db.lastRetryRound('s1')).toBe(2);
      expect((await db.counts('s1')).none).toEqual({ done: 2, failed: 0, retried: 1 });
      // A run that never failed is not touched by a retry's write.
      const faithful = record('s1', 'drift', 'Demo.item_1', 0);
      expect(await db.replaceFailedRun({ ...faithful, outcome: 'unfaithful', retryRound: 5 })).toBe(false);
      expect(await db.getRun(faithful.workflowId)).toEqual(faithful);
    });

    it('pins the index version once', async () => {
      expect(await db.setIndexVersion('s1', 'v-1')).toBe('v-1');
      expect(await db.setIndexVersion('s1', 'v-2')).toBe('v-1');
    });

    it('takes concurrent writers of the same runs without duplicates', async () => {
      await db.createSweep(sweepRow('s2'), ITEMS.slice(0, 20));
      const writes = ITEMS.slice(0, 20).flatMap((item) => [0, 1, 2].map(() => db.recordRun(record('s2', 'drift', item.id, 0))));
      const results = await Promise.all(writes);
      expect(results.filter(Boolean)).toHaveLength(20);
      expect(await db.counts('s2')).toEqual({ drift: { done: 20, failed: 0, retried: 0 } });
    });

    it("keeps LLM replies once by key and sums a run's and a sweep's calls", async () => {
      const ledger = new SqlReplyLedger(db.driver);
      const usage = { promptTokens: 100, completionTokens: 20, cachedTokens: 0 };
      await ledger.putReply('k1', { status: 200, body: '{"a":1}' });
      await ledger.putReply('k1', { status: 200, body: '{"a":2}' });
      expect(await ledger.getReply('k1')).toEqual({ status: 200, body: '{"a":1}' });
      expect(await ledger.getReply('nope')).toBeUndefined();
      const call = { stage: 'formalize', provider: 'p', model: 'm', key: 'k1', usage, batch: false };
      await ledger.recordCall({ ...call, runId: 'sw_1/drift/a/0', costUsd: 0.5, costIfSyncUsd: 0.5, cacheHit: false });
      await ledger.recordCall({ ...call, runId: 'sw_1/drift/a/0', costUsd: 0, costIfSyncUsd: 0, cacheHit: true });
      await ledger.recordCall({ ...call, runId: 'sw_1/none/b/0', costUsd: 0.25, costIfSyncUsd: 0.25, cacheHit: false });
      // `_` must not act as a LIKE wildcard: sw_10 is another sweep.
      await ledger.recordCall({ ...call, runId: 'sw_10/drift/a/0', costUsd: 9, costIfSyncUsd: 9, cacheHit: false });
      expect(await ledger.runTotals('sw_1/drift/a/0')).toEqual({
        calls: 2,
        promptTokens: 200,
        completionTokens: 40,
        totalTokens: 240,
        costUsd: 0.5,
        hits: 1,
        misses: 1,
      });
      expect(await ledger.sweepTotals('sw_1')).toMatchObject({ calls: 3, totalTokens: 360, costUsd: 0.75, hits: 1, misses: 2 });
      // A paid call without a price leaves the total cost unknown rather than too low.
      await ledger.recordCall({ ...call, runId: 'sw_1/none/b/0', costUsd: undefined, costIfSyncUsd: undefined, cacheHit: false });
      expect((await ledger.sweepTotals('sw_1')).costUsd).toBeUndefined();
    });

    it('keeps batch calls at the price paid and what they would have cost one at a time; run totals stay what was paid', async () => {
      const ledger = new SqlReplyLedger(db.driver);
      const usage = { promptTokens: 1000, completionTokens: 500, cachedTokens: 0 };
      const call = { stage: 'judge', provider: 'p', model: 'm', key: 'kb', usage };
      await ledger.recordCall({ ...call, runId: 'sb/drift/a/0', costUsd: 0.125, costIfSyncUsd: 0.25, cacheHit: false, batch: true });
      await ledger.recordCall({ ...call, runId: 'sb/drift/a/0', costUsd: 0.25, costIfSyncUsd: 0.25, cacheHit: false, batch: false });
      await ledger.recordCall({ ...call, runId: 'sb/drift/a/0', costUsd: 0, costIfSyncUsd: 0, cacheHit: true, batch: false });
      await ledger.recordCall({ ...call, runId: 'sb/none/b/0', costUsd: 0.5, costIfSyncUsd: 1, cacheHit: false, batch: true });
      await ledger.recordCall({
        ...call,
        runId: 'sb/none/b/0',
        costUsd: undefined,
        costIfSyncUsd: undefined,
        cacheHit: false,
        batch: true,
      });
      // Another sweep's calls are not this one's.
      await ledger.recordCall({ ...call, runId: 'sb2/drift/a/0', costUsd: 7, costIfSyncUsd: 14, cacheHit: false, batch: true });
      expect(await ledger.sweepRunCosts('sb')).toEqual([
        { runId: 'sb/drift/a/0', calls: 3, batchCalls: 1, unpricedCalls: 0, costUsd: 0.375, costIfSyncUsd: 0.5 },
        { runId: 'sb/none/b/0', calls: 2, batchCalls: 2, unpricedCalls: 1, costUsd: 0.5, costIfSyncUsd: 1 },
      ]);
      expect((await ledger.runTotals('sb/drift/a/0')).costUsd).toBe(0.375);
      expect(await ledger.sweepRunCosts('nothing')).toEqual([]);
    });

    it('migrates a ledger written before batch calls: its calls were synchronous, and cost one at a time what they cost', async () => {
      const driver = await openEmpty('before_batch');
      try {
        // The database as driftline left it at schema version 5 (what migrate() does, up to 5).
        await driver.run('CREATE TABLE schema_version (version INTEGER NOT NULL)');
        for (const m of MIGRATIONS.filter((x) => x.version <= 5)) {
          for (const sql of m.statements) await driver.run(sql);
          await driver.run('INSERT INTO schema_version (version) VALUES (?)', [m.version]);
        }
        const insert = `INSERT INTO llm_calls (id, run_id, stage, provider, model, reply_key, prompt_tokens, completion_tokens, cached_tokens, cost_usd, cache_hit, at)
                        VALUES (?, 'old/c/i/0', 'judge', 'p', 'm', 'k', 10, 5, 0, ?, 0, '2026-12-01T00:00:00Z')`;
        await driver.run(insert, ['a', 0.75]);
        await driver.run(insert, ['b', null]);
        expect(await migrate(driver)).toBe(SCHEMA_VERSION);
        expect(await new SqlReplyLedger(driver).sweepRunCosts('old')).toEqual([
          { runId: 'old/c/i/0', calls: 2, batchCalls: 0, unpricedCalls: 1, costUsd: 0.75, costIfSyncUsd: 0.75 },
        ]);
      } finally {
        await driver.close();
      }
    });
  });
}

const sqliteDirs: string[] = [];
contract(
  'SQLite',
  async () => {
    const dir = sqliteDirs[0] ?? mkdtempSync(join(tmpdir(), 'driftline-results-'));
    sqliteDirs[0] = dir;
    return ResultsDb.open({ file: join(dir, 'results.sqlite') });
  },
  async (label) => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-results-'));
    sqliteDirs.push(dir);
    return openSqlite(join(dir, `${label}.sqlite`));
  },
);

let pg: TestPostgres | undefined;
contract(
  'PostgreSQL',
  async () => {
    pg ??= await startPostgres();
    return ResultsDb.open({ url: pg.url, file: '' });
  },
  async (label) => {
    pg ??= await startPostgres();
    const admin = openPostgres(pg.url);
    try {
      await admin.run(`CREATE DATABASE ${label}`);
    } finally {
      await admin.close();
    }
    return openPostgres(pg.url.replace(/\/postgres$/, `/${label}`));
  },
);

afterAll(() => {
  pg?.stop();
  for (const d of sqliteDirs) rmSync(d, { recursive: true, force: true });
});

describe('results database: helpers', () => {
  it('numbers placeholders for PostgreSQL', () => {
    expect(numberPlaceholders('SELECT * FROM t WHERE a = ? AND b IN (?, ?)')).toBe('SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)');
  });

  it('says which database it cannot open', async () => {
    await expect(ResultsDb.open({ url: 'postgres://nobody@127.0.0.1:1/none', file: '' })).rejects.toThrow(
      /PostgreSQL results database \(DRIFTLINE_RESULTS_URL\)/,
    );
  });

  it('exports JSONL as stored and CSV with RFC 4180 quoting', () => {
    const a = record('s', 'drift', 'A.x', 0);
    const b = { ...record('s', 'drift', 'A.y', 1, 'failed'), retryRound: 2 };
    const jsonl = toJsonl([a, b]).trimEnd().split('\n');
    expect(jsonl.map((l) => JSON.parse(l))).toEqual([a, b]);
    const csv = toCsv([a, b]).split('\r\n');
    expect(csv[0]!.startsWith('sweepId,config,configHash,item,sample,workflowId,outcome,compiled')).toBe(true);
    expect(csv[1]).toContain('s,drift,h1,A.x,0,s/drift/A.x/0,faithful,true');
    expect(csv[2]).toContain('"boom, ""quoted"""');
    expect(
      csv[0]!.endsWith(
        ',finishedAt,sourceJudgeGrade,sourceFaithful,rescoreOf,retryRound,totalMs,totalTokens,refusal,temporalUrl,refusedBy,notComparable',
      ),
    ).toBe(true);
    expect(csv[1]).toMatch(/,2026-11-30T07:00:00\.000Z,,,,,\d+,\d*,,,,$/);
    expect(csv[2]).toMatch(/,2026-11-30T07:00:00\.000Z,,,,2,\d+,\d*,,,,$/);
    // With the Temporal UI known, each row links its run.
    expect(
      toCsv([a], (id) => `http://ui/${id}`)
        .split('\r\n')[1]!
        .endsWith(',http://ui/s/drift/A.x/0,,'),
    ).toBe(true);
    expect(csv).toHaveLength(4); // header, two rows, trailing empty
    expect(csvField('a\nb')).toBe('"a\nb"');
    expect(csvField(null)).toBe('');
  });
});
