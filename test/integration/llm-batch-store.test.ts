// Batch mode's records (engines/results/llm-batches.ts) on SQLite and PostgreSQL: every write can
// be repeated (a retried activity) without changing anything twice, and the counts the status
// views and the report show come from them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResultsDb } from '../../engines/results/results-db';
import { SqlBatchStore, sweepBatchCounts, type CollectedRequest } from '../../engines/results/llm-batches';
import { startPostgres, type TestPostgres } from '../helpers/postgres';

const req = (n: number, sweep = 's1'): CollectedRequest => ({
  customId: `${sweep}/drift/A.${n}/0@abcd1234/formalize/3/${n.toString(16).padStart(16, '0')}`,
  sweep,
  batcher: `llm-batch/${sweep}/default/m`,
  provider: 'default',
  model: 'm',
  runId: `${sweep}/drift/A.${n}/0`,
  stage: 'formalize',
  body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `q${n}` }] }),
});

const batch = (id: string, flushId: string, sweep = 's1') => ({
  batchId: id,
  sweep,
  batcher: `llm-batch/${sweep}/default/m`,
  provider: 'default',
  model: 'm',
  flushId,
  status: 'validating' as const,
  submittedAt: '2026-12-06T20:00:00.000Z',
});

function contract(name: string, open: () => Promise<ResultsDb>) {
  describe(`batch store: ${name}`, () => {
    let db: ResultsDb;
    let store: SqlBatchStore;
    beforeAll(async () => {
      db = await open();
      store = new SqlBatchStore(db.driver);
    });
    afterAll(async () => {
      await db?.close();
    });

    it('collects once, submits once, and writes an ended batch once', async () => {
      const [a, b, c] = [req(1), req(2), req(3)];
      for (const r of [a, b, c, a, b]) await store.collect(r!);
      expect(await store.request(a!.customId)).toEqual({ state: 'collected', reply: null, error: null, submissions: 0 });
      const waiting = await store.waitingBodies([c!.customId, a!.customId, 'unknown', b!.customId]);
      expect(waiting.map((w) => w.customId)).toEqual([c!.customId, a!.customId, b!.customId]);
      expect(JSON.parse(waiting[1]!.body)).toMatchObject({ model: 'm' });

      const ids = [a!.customId, b!.customId, c!.customId];
      await store.submitted(batch('batch_1', 'f1'), ids, 0);
      await store.submitted(batch('batch_1', 'f1'), ids, 0); // a retry
      expect((await store.request(a!.customId))?.submissions).toBe(1);
      expect(await store.waitingBodies(ids)).toEqual([]);
      expect(await store.batchOfFlush('f1')).toMatchObject({ batchId: 'batch_1', customIds: [...ids].sort() });
      expect(await store.batchOfFlush('f2')).toBeUndefined();

      await store.batchStatus('batch_1', 'completed');
      const lines = [
        { customId: a!.customId, ok: true as const, body: '{"id":"chatcmpl-1"}' },
        { customId: b!.customId, ok: false as const, error: 'HTTP 500: server error' },
        { customId: c!.customId, ok: false as const, error: 'batch_expired' },
      ];
      await store.ended('batch_1', lines, (id) => id === c!.customId);
      await store.ended('batch_1', [{ customId: a!.customId, ok: true, body: '{"id":"other"}' }], () => false); // a retry changes nothing
      expect(await store.request(a!.customId)).toMatchObject({ state: 'answered', reply: '{"id":"chatcmpl-1"}' });
      expect(await store.request(b!.customId)).toMatchObject({ state: 'collected', error: 'HTTP 500: server error' });
      expect(await store.request(c!.customId)).toMatchObject({ state: 'synchronous' });

      // The failed line goes again, counted as a resubmission.
      await store.submitted(batch('batch_2', 'f2'), [b!.customId], 1);
      expect((await store.request(b!.customId))?.submissions).toBe(2);
      expect(await sweepBatchCounts(db.driver, 's1')).toEqual({
        inFlight: 1,
        submitted: 2,
        completed: 1,
        failed: 0,
        requests: 4,
        resubmitted: 1,
        synchronous: 1,
        batches: [{ id: 'batch_2', provider: 'default', model: 'm', status: 'validating', requests: 1, since: '2026-12-06T20:00:00.000Z' }],
      });
      await store.batchStatus('batch_2', 'expired');
      expect(await sweepBatchCounts(db.driver, 's1')).toMatchObject({ inFlight: 0, failed: 1, batches: [] });
      expect(await sweepBatchCounts(db.driver, 'none')).toMatchObject({ submitted: 0, requests: 0, inFlight: 0 });
    });

    it('keeps a request in flight for a caller that stopped waiting, and collects a withdrawn one again', async () => {
      const [a, b] = [req(1, 's2'), req(2, 's2')];
      await store.collect(a!);
      await store.collect(b!);
      await store.submitted(batch('batch_3', 'f3', 's2'), [b!.customId], 0);
      await store.withdraw([a!.customId, b!.customId]);
      expect((await store.request(a!.customId))?.state).toBe('withdrawn');
      expect((await store.request(b!.customId))?.state).toBe('submitted');
      await store.collect(a!); // its run ran again
      expect((await store.request(a!.customId))?.state).toBe('collected');
      await store.release([a!.customId, b!.customId], 'withdrawn');
      expect((await store.request(b!.customId))?.state).toBe('withdrawn');
      await store.release([a!.customId], 'synchronous'); // released already: stays
      expect((await store.request(a!.customId))?.state).toBe('withdrawn');
    });
  });
}

const dirs: string[] = [];
contract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'driftline-batch-store-'));
  dirs.push(dir);
  return ResultsDb.open({ file: join(dir, 'results.sqlite') });
});

let pg: TestPostgres | undefined;
contract('PostgreSQL', async () => {
  pg ??= await startPostgres();
  return ResultsDb.open({ url: pg.url, file: '' });
});

afterAll(() => {
  pg?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
