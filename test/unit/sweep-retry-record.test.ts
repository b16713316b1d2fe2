// The record activity in a `driftline sweep retry` round (activities/sweep.ts), on a real SQLite
// results database: the unit's failed record is replaced in place, once per round; a call
// repeated after the write (a worker killed before the activity completed, so Temporal runs it
// again) writes nothing twice and answers as the first did; a run that did not fail is never
// touched.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSweepActivities } from '../../activities/sweep';
import { ResultsDb } from '../../engines/results/results-db';
import { failedRecord } from '../../engines/sweeps/record';
import { DEFAULT_RUN_CONFIG } from '../../common/run-config-schema';
import type { FormalizeResult } from '../../common/run-types';
import type { RecordRunInput, SweepActivities } from '../../common/sweep';

const unit = {
  sweepId: 'sw',
  workflowId: 'sw/A/i0/0',
  cell: { name: 'A', hash: 'h' },
  item: { id: 'i0', goldPremises: [], tags: {} },
  sample: 0,
};

const compiled: FormalizeResult = {
  statement: 's',
  library: 'mini',
  config: DEFAULT_RUN_CONFIG,
  formalStatement: 'theorem x : True := by sorry',
  compiled: true,
  checked: true,
  outcome: 'compiled',
  attempts: [{ round: 0, statement: 'theorem x : True := by sorry', compile: { status: 'ok', messages: [], durationMs: 3 } }],
  judge: null,
  subqueries: [],
  premises: [],
  examples: [],
  notes: [],
  stages: [],
};

let dir: string;
let db: ResultsDb;
let activities: SweepActivities;
const record = (over: Partial<RecordRunInput>) => activities.recordSweepRun({ ...unit, attempt: 1, lastAttempt: true, ...over });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-retry-record-'));
  db = await ResultsDb.open({ file: join(dir, 'results.sqlite') });
  activities = createSweepActivities({ results: db });
  // The sweep's own run: two failed attempts, then the failed record.
  await db.recordFailure('sw', unit.workflowId, 1, 'down');
  await db.recordFailure('sw', unit.workflowId, 2, 'down');
  await db.recordRun(failedRecord(unit, 'down', new Date()));
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the record activity in a retry round', () => {
  it('replaces the failed record once per round, and a repeated call changes nothing', async () => {
    // Round 1, attempt 3 of 3–4 fails: noted, the failed record stays for the last attempt.
    expect(await record({ retryRound: 1, attempt: 3, lastAttempt: false, failure: 'still down' })).toMatchObject({
      outcome: 'failed',
      failedAttempt: true,
    });
    expect(await db.getRun(unit.workflowId)).toMatchObject({ error: 'down' });
    expect((await db.getRun(unit.workflowId))!.retryRound).toBeUndefined();
    // Attempt 4, the last: the failed record is replaced by round 1's.
    await record({ retryRound: 1, attempt: 4, failure: 'down again' });
    expect(await db.getRun(unit.workflowId)).toMatchObject({ outcome: 'failed', error: 'down again', retryRound: 1 });
    // The same call again (the activity run again after a kill): answered from the record.
    expect(await record({ retryRound: 1, attempt: 4, failure: 'a third reason' })).toEqual({
      workflowId: unit.workflowId,
      outcome: 'failed',
      finished: true,
      error: 'down again',
    });
    expect(await db.getRun(unit.workflowId)).toMatchObject({ error: 'down again', retryRound: 1 });
    expect((await db.failures('sw')).map((f) => f.attempt)).toEqual([1, 2, 3, 4]);

    // Round 2 succeeds; repeated, it answers the same and keeps the one record.
    expect(await record({ retryRound: 2, attempt: 5, result: compiled })).toEqual({
      workflowId: unit.workflowId,
      outcome: 'compiled',
      finished: true,
    });
    expect(await record({ retryRound: 2, attempt: 5, result: { ...compiled, outcome: 'unchecked' } })).toMatchObject({
      outcome: 'compiled',
    });
    // A late write of the sweep's own run, or of a later round, leaves a run that did not fail.
    expect(await record({ attempt: 2, failure: 'late' })).toMatchObject({ outcome: 'compiled' });
    expect(await record({ retryRound: 3, attempt: 7, failure: 'late' })).toMatchObject({ outcome: 'compiled' });
    const runs = await db.runs('sw');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ outcome: 'compiled', compiled: true, retryRound: 2 });
    expect(runs[0]!.error).toBeUndefined();
    expect(await db.counts('sw')).toEqual({ A: { done: 1, failed: 0, retried: 1 } });
  });
});
