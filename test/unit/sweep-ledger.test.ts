// The sweep's bookkeeping without Temporal (common/sweep-ledger.ts): unit coordinates and IDs,
// the order units start in, counters, retries, the budget, pause, the status, the carried cursor
// and a retry round's cursor.
import { describe, expect, it } from 'vitest';
import { decodeUnit, encodeUnit, retryCursor, SweepLedger, unitChildFor, unitWorkflowId } from '../../common/sweep-ledger';
import type { BenchmarkItem, RecordedRun, SweepInput, UnitAttempt } from '../../common/sweep';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function input(over: Partial<SweepInput> = {}): SweepInput {
  return {
    sweepId: 'sw',
    library: 'mini',
    items: 3,
    cells: [
      { name: 'a', config: {}, hash: 'ha' },
      { name: 'b', config: { retrieval: 'none' }, hash: 'hb' },
    ],
    samples: 2,
    window: 2,
    maxAttempts: 2,
    leaveOut: 'item',
    ...over,
  };
}

const item = (id: string) => ({ id, goldPremises: [], tags: {} });
const ok = (over: Partial<RecordedRun> = {}): RecordedRun => ({ workflowId: 'x', outcome: 'faithful', finished: true, ...over });
const fail = (over: Partial<RecordedRun> = {}): RecordedRun => ok({ outcome: 'failed', failedAttempt: true, error: 'boom', ...over });

/** Starts the next unit and records it with `recorded`. */
function runNext(l: SweepLedger, recorded: RecordedRun): { attempt: UnitAttempt; end: string } {
  const attempt = l.next()!;
  l.started(attempt);
  const record = l.recordInput(attempt, item(`i${l.decode(attempt.unit).item}`));
  l.noteTotals(recorded.totals);
  return { attempt, end: l.recorded(attempt, record, recorded) };
}

describe('unit coordinates', () => {
  it('orders units item-major, then configuration, then sample, and encodes them back', () => {
    const i = input();
    expect([0, 1, 2, 3, 4].map((u) => decodeUnit(i, u)).map((c) => `${c.item}/${c.cell.name}/${c.sample}`)).toEqual([
      '0/a/0',
      '0/a/1',
      '0/b/0',
      '0/b/1',
      '1/a/0',
    ]);
    for (let u = 0; u < 12; u++) {
      const c = decodeUnit(i, u);
      expect(encodeUnit(i, c.item, c.cell.name, c.sample)).toBe(u);
    }
    expect(encodeUnit(i, 0, 'nope', 0)).toBeUndefined();
    expect(encodeUnit(i, 0, 'a', 2)).toBeUndefined();
    expect(unitWorkflowId('sw', 'a', 'Demo.x', 1)).toBe('sw/a/Demo.x/1');
  });
});

describe('the sweep ledger', () => {
  it('starts every unit once, within the window, and completes with the counts', () => {
    const l = SweepLedger.start(input(), T0);
    expect(l.progress(T0)).toMatchObject({ status: 'running', total: 12, done: 0, failed: 0, running: 0, generation: 0 });
    const a = l.next()!;
    const b = l.next()!;
    l.started(a);
    l.started(b);
    expect(l.mayStart()).toBe(false); // window 2
    expect(l.progress(T0).perConfig.a).toMatchObject({ running: 2, total: 6 });
    l.recorded(a, l.recordInput(a, item('i0')), ok());
    expect(l.mayStart()).toBe(true);
    l.recorded(b, l.recordInput(b, item('i0')), ok({ outcome: 'not-compiled' }));
    for (let n = 2; n < 12; n++) runNext(l, ok());
    expect(l.next()).toBeUndefined();
    expect(l.isDone()).toBe(true);
    l.finish(T0 + 6000);
    expect(l.progress(T0 + 6000)).toMatchObject({ status: 'completed', done: 12, failed: 0, rate: 2, etaSeconds: 0 });
  });

  it('skips reused cells, whose units count as done', () => {
    const l = SweepLedger.start(input({ reusedCells: ['b'] }), T0);
    const started: string[] = [];
    for (let u = l.next(); u; u = l.next()) started.push(l.decode(u.unit).cell.name);
    expect(started).toEqual(['a', 'a', 'a', 'a', 'a', 'a']);
    expect(l.progress(T0).perConfig.b).toMatchObject({ done: 6 });
  });

  it('queues a failed attempt again before new units, and counts a unit failed only after its last attempt', () => {
    const l = SweepLedger.start(input(), T0);
    const first = runNext(l, fail());
    expect(first.end).toBe('retry');
    expect(l.progress(T0)).toMatchObject({ done: 0, failed: 0, retries: 1 });
    const again = l.next()!;
    expect(again).toEqual({ unit: first.attempt.unit, attempt: 2 });
    l.started(again);
    const record = l.recordInput(again, item('i0'));
    expect(record).toMatchObject({ workflowId: 'sw/a/i0/0', attempt: 2, lastAttempt: true, cell: { name: 'a', hash: 'ha' } });
    expect(l.recorded(again, record, fail())).toBe('counted');
    expect(l.progress(T0)).toMatchObject({ done: 1, failed: 1, retries: 1 });
  });

  it('starts nothing once the budget is reached, and leaves a failed attempt past it unrun', () => {
    const l = SweepLedger.start(input({ budget: { tokens: 100 } }), T0);
    expect(runNext(l, ok({ totals: { tokens: 40 } })).end).toBe('counted');
    expect(l.budgetReached()).toBe(false);
    const a = l.next()!;
    const b = l.next()!;
    l.started(a);
    l.started(b);
    expect(l.noteTotals({ tokens: 120 })).toBe('token budget reached: 120 tokens used of 100');
    expect(l.noteTotals({ tokens: 130 })).toBeUndefined(); // reached once
    expect(l.recorded(a, l.recordInput(a, item('i0')), ok())).toBe('counted');
    expect(l.recorded(b, l.recordInput(b, item('i0')), fail())).toBe('unrun');
    expect(l.mayStart()).toBe(false);
    expect(l.isDone()).toBe(true);
    l.finish(T0 + 1000);
    expect(l.progress(T0 + 1000)).toMatchObject({
      status: 'budget-exhausted',
      done: 2,
      budget: { tokens: 100, used: { tokens: 130 }, reached: 'token budget reached: 120 tokens used of 100' },
    });
  });

  it('counts only unpaused time, and answers paused and cancelled', () => {
    const l = SweepLedger.start(input(), T0);
    runNext(l, ok());
    expect(l.pause(T0 + 1000)).toBe(true);
    expect(l.pause(T0 + 1500)).toBe(false);
    expect(l.mayStart()).toBe(false);
    expect(l.progress(T0 + 9000)).toMatchObject({ status: 'paused', rate: 1 });
    expect(l.resume(T0 + 9000)).toBe(true);
    expect(l.progress(T0 + 10_000)).toMatchObject({ status: 'running', rate: 0.5 });
    l.cancel();
    expect(l.progress(T0 + 10_000).status).toBe('cancelled');
  });

  it('carries its cursor across continueAsNew, the running units in flight', () => {
    const i = input();
    const l = SweepLedger.start(i, T0);
    runNext(l, ok());
    const running = l.next()!;
    l.started(running);
    const cursor = l.carry(T0 + 2000);
    expect(cursor).toMatchObject({ next: 2, inflight: [running], generation: 1, activeMs: 2000 });
    const next = SweepLedger.start({ ...i, cursor }, T0 + 5000);
    expect(next.takeInflight()).toEqual([running]);
    expect(next.takeInflight()).toEqual([]);
    expect(next.progress(T0 + 5000)).toMatchObject({ done: 1, generation: 1 });
    expect(next.next()).toEqual({ unit: 2, attempt: 1 });
  });

  it('runs a retry round: only the failed units, attempts counted on, a success counted off `failed`', () => {
    const i = input();
    const request = {
      round: 2,
      units: [
        { item: 2, cell: 'b', sample: 1, attemptsBefore: 4 },
        { item: 0, cell: 'a', sample: 1, attemptsBefore: 2 },
      ],
      counts: { a: { done: 6, failed: 1, retried: 1 }, b: { done: 6, failed: 1, retried: 2 } },
      retries: 3,
      activeMs: 12_000,
      startedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(retryCursor(i, request).retryQueue).toEqual([
      { unit: 1, attempt: 3, last: 4 },
      { unit: 11, attempt: 5, last: 6 },
    ]);
    const l = SweepLedger.start({ ...i, retryRound: request }, T0);
    const a = runNext(l, ok());
    expect(l.recordInput(a.attempt, item('i0'))).toMatchObject({ retryRound: 2, attempt: 3, lastAttempt: false });
    const b = l.next()!;
    l.started(b);
    expect(l.recordInput(b, item('i2'))).toMatchObject({ workflowId: 'sw/b/i2/1', attempt: 5 });
    l.recorded(b, { ...l.recordInput(b, item('i2')), lastAttempt: true }, fail());
    expect(l.next()).toBeUndefined();
    l.finish(T0);
    expect(l.progress(T0)).toMatchObject({ status: 'completed', done: 12, failed: 1, retried: 3, retries: 3, generation: 0 });
    expect(() => retryCursor(i, { ...request, units: [{ item: 0, cell: 'zzz', sample: 0, attemptsBefore: 1 }] })).toThrow(/not a unit/);
    // A sweep that was cancelled before every unit ran stays cancelled after its retry.
    const incomplete = SweepLedger.start({ ...i, retryRound: { ...request, units: [], incomplete: true } }, T0);
    incomplete.finish(T0);
    expect(incomplete.progress(T0).status).toBe('cancelled');
  });
});

describe('the child a unit runs', () => {
  const bench: BenchmarkItem = {
    id: 'Demo.x',
    informal: 'x',
    goldStatement: 'theorem x : True := by sorry',
    goldPremises: ['P'],
    tags: {},
  };
  it('is a formalize run for a generated cell, with the item excluded and the sample', () => {
    const choice = unitChildFor(input({ indexVersion: 'mini-v1' }), input().cells[0]!, bench, 1);
    expect(choice).toMatchObject({
      type: 'formalize',
      args: { exclude: ['Demo.x'], sample: 1, indexVersion: 'mini-v1', goldPremises: ['P'] },
    });
    const agent = unitChildFor(input(), { name: 'ag', config: { mode: 'agent' }, hash: 'h' }, bench, 0);
    expect(agent).toMatchObject({ type: 'formalizeAgent' });
    expect('args' in agent && 'sample' in agent.args).toBe(false);
  });
  it('is evaluateStatement of the file\u2019s statement for a predictions cell, or missing', () => {
    const cell = { name: 'p', config: {}, hash: 'h', predictionsFile: { sha256: 'x', statements: 1 } };
    expect(unitChildFor(input(), cell, bench, 0, 'theorem t : True := by sorry')).toMatchObject({
      type: 'evaluateStatement',
      args: { formalStatement: 'theorem t : True := by sorry' },
    });
    expect(unitChildFor(input(), cell, bench, 0)).toEqual({ missing: true });
  });
});
