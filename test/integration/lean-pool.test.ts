// The REPL pool against the fake REPL: header reuse, replacement after timeouts, crashes and
// memory growth, retirement after max uses, back-pressure and cancellation, concurrency.
import { afterEach, describe, expect, it } from 'vitest';
import { ReplPool, type ReplPoolSettings } from '../../engines/lean/repl-pool';
import type { FakeReplScript } from '../fakes/fake-repl-rules';
import { fakeRepl, type FakeRepl, type FakeReplLogEvent } from '../fakes/fake-repl-harness';

const pools: ReplPool[] = [];
const fakes: FakeRepl[] = [];

function setup(script: FakeReplScript = {}, settings: Partial<ReplPoolSettings> = {}) {
  const fake = fakeRepl(script);
  fakes.push(fake);
  const pool = new ReplPool({ replCmd: fake.command, header: 'import Mathlib', timeoutMs: 10_000, size: 2, ...settings });
  pools.push(pool);
  return { fake, pool };
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const f of fakes.splice(0)) f.cleanup();
});

const theorem = (name: string) => `theorem ${name} : True := by sorry`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function byPid(events: FakeReplLogEvent[], event: string): Map<number, FakeReplLogEvent[]> {
  const out = new Map<number, FakeReplLogEvent[]>();
  for (const e of events.filter((x) => x.event === event)) out.set(e.pid, [...(out.get(e.pid) ?? []), e]);
  return out;
}

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

describe('ReplPool', () => {
  it('imports the header once per process and runs checks on both processes', async () => {
    const { fake, pool } = setup({ headerDelayMs: 200, bodyDelayMs: 80 });
    // Both processes ready first, so how fast each one starts on a busy machine does not matter.
    await pool.warm();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => pool.check(theorem(`t${i}`))));
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    const headers = byPid(fake.events(), 'header');
    expect(fake.processes()).toBe(2);
    expect([...headers.values()].map((h) => h.length)).toEqual([1, 1]);
    // Two idle processes and eight checks at once: each process takes one at the start.
    const bodies = byPid(fake.events(), 'body');
    expect(bodies.size).toBe(2);
    expect([...bodies.values()].reduce((n, b) => n + b.length, 0)).toBe(8);
  });

  it('never lets two concurrent checks share a process, yet runs checks side by side', async () => {
    const { fake, pool } = setup({ bodyDelayMs: 500 }, { size: 3 });
    await pool.warm();
    await Promise.all(Array.from({ length: 9 }, (_, i) => pool.check(theorem(`t${i}`))));
    const bodies = byPid(fake.events(), 'body');
    for (const list of bodies.values()) {
      const sorted = [...list].sort((a, b) => a.began! - b.began!);
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.began!).toBeGreaterThanOrEqual(sorted[i - 1]!.ended!);
    }
    // Across processes the checks did overlap: the pool is a pool.
    const all = fake.events().filter((e) => e.event === 'body');
    const overlapping = all.some((a) => all.some((b) => a.pid !== b.pid && a.began! < b.ended! && b.began! < a.ended!));
    expect(overlapping).toBe(true);
    expect(bodies.size).toBe(3);
  });

  it('sends a check to the process that already has its header', async () => {
    const { fake, pool } = setup({ headerDelayMs: 100 });
    await pool.warm();
    expect(fake.count('header')).toBe(2);
    const item = 'import ConNF\nopen ConNF';
    for (const name of ['a', 'b', 'c', 'd']) await pool.check(theorem(name), { header: item });
    const conNF = fake.events().filter((e) => e.event === 'header' && e.detail.includes('ConNF'));
    expect(conNF).toHaveLength(1);
    const bodyPids = new Set(
      fake
        .events()
        .filter((e) => e.event === 'body')
        .map((e) => e.pid),
    );
    expect(bodyPids).toEqual(new Set([conNF[0]!.pid]));
  });

  it('warm() starts every process with the library header, so checks import nothing', async () => {
    const { fake, pool } = setup({ headerDelayMs: 300 });
    await pool.warm();
    expect(fake.processes()).toBe(2);
    expect(fake.count('header')).toBe(2);
    await Promise.all([pool.check(theorem('a')), pool.check(theorem('b'))]);
    expect(fake.count('header')).toBe(2);
    expect(pool.stats()).toMatchObject({ started: 2, headerImports: 2, busy: 0, waiting: 0 });
  });

  it('reports a timed-out check as `timeout`, kills its process and warms a replacement at once', async () => {
    const { fake, pool } = setup({}, { size: 1 });
    await pool.check(theorem('warm'));
    const slow = await pool.check(theorem('HANG_REPL'), { timeoutMs: 300 });
    expect(slow.status).toBe('timeout');
    expect(slow.reason).toMatch(/within 300 ms/);
    // The replacement imports the library header before anyone asks for it.
    await until(() => fake.count('header') === 2);
    expect(fake.processes()).toBe(2);
    expect((await pool.check(theorem('after'))).status).toBe('ok');
    expect(fake.count('header')).toBe(2);
    expect(pool.stats().retired.timeout).toBe(1);
  });

  it('retries a check whose process crashed mid-check on a fresh process, and it succeeds', async () => {
    const { fake, pool } = setup({}, { size: 1 });
    const result = await pool.check(theorem('CRASH_ONCE'));
    expect(result.status).toBe('ok');
    expect(fake.count('crash')).toBe(1);
    expect(fake.processes()).toBe(2);
    expect(pool.stats().retired.crash).toBe(1);
  });

  it('retires a process after maxUses checks and replaces it', async () => {
    const { fake, pool } = setup({}, { size: 1, maxUses: 3 });
    for (let i = 0; i < 7; i++) expect((await pool.check(theorem(`t${i}`))).status).toBe('ok');
    expect(fake.processes()).toBe(3);
    const bodies = byPid(fake.events(), 'body');
    expect([...bodies.values()].map((b) => b.length)).toEqual([3, 3, 1]);
    expect(pool.stats().retired.maxUses).toBe(2);
  });

  it('recycles a process whose memory grew past the cap, between checks', async () => {
    // Each command keeps 60 MB; the cap is passed after a few checks.
    const { fake, pool } = setup({ memoryPerCommandMb: 60 }, { size: 1, maxRssMb: 250 });
    for (let i = 0; i < 6; i++) expect((await pool.check(theorem(`t${i}`))).status).toBe('ok');
    expect(pool.stats().retired.memory).toBeGreaterThanOrEqual(1);
    expect(fake.processes()).toBeGreaterThanOrEqual(2);
    // No process ever ran more than a few commands.
    for (const list of byPid(fake.events(), 'body').values()) expect(list.length).toBeLessThan(5);
  });

  it("reports each check's peak memory, read from the REPL's processes", async () => {
    // Each command keeps 60 MB resident: the third statement's peak is at least 120 MB above
    // the first's (two more commands' worth), with or without a cap configured.
    const { pool } = setup({ memoryPerCommandMb: 60 }, { size: 1 });
    const peaks: number[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await pool.check(theorem(`m${i}`));
      expect(result.status).toBe('ok');
      expect(result.peakRssMb).toBeGreaterThan(60);
      peaks.push(result.peakRssMb!);
    }
    expect(peaks[2]! - peaks[0]!).toBeGreaterThanOrEqual(110);
    // A refused statement never reached Lean: no memory to report.
    expect((await pool.check('#eval 1')).peakRssMb).toBeUndefined();
  });

  it('kills a check whose memory passes the cap while it runs, and says so', async () => {
    // The check would take 30 s; it must end well before (spawning the process included, on a
    // busy machine), killed by the watcher, and never be answered by the REPL.
    const { fake, pool } = setup(
      { memoryPerCommandMb: 400, bodyDelayMs: 30_000 },
      { size: 1, maxRssMb: 300, rssIntervalMs: 50, eagerReplace: false },
    );
    const started = Date.now();
    const result = await pool.check(theorem('big'));
    expect(result.status).toBe('error');
    expect(result.messages[0]!.text).toMatch(/MB \(cap 300 MB\)/);
    expect(Date.now() - started).toBeLessThan(30_000); // killed, not waited out
    expect(fake.count('body')).toBe(0);
    expect(pool.stats().retired.memory).toBe(1);
  });

  it('imports the header again when the REPL answers "Unknown environment."', async () => {
    const { fake, pool } = setup({ forgetEnvsAfter: 2 }, { size: 1 });
    expect((await pool.check(theorem('a'))).status).toBe('ok'); // commands 1 (header), 2 (body)
    const second = await pool.check(theorem('b')); // command 3: env 0 forgotten
    expect(second.status).toBe('ok');
    expect(fake.count('unknown-env')).toBe(1);
    expect(fake.count('header')).toBe(2);
    expect(fake.processes()).toBe(1); // same process, header re-imported
  });

  it('makes checks wait when every process is busy, and a cancelled waiter never runs', async () => {
    const { fake, pool } = setup({ bodyDelayMs: 400 }, { size: 1 });
    const first = pool.check(theorem('a'));
    const controller = new AbortController();
    const second = pool.check(theorem('b'), { signal: controller.signal });
    const third = pool.check(theorem('c'));
    await sleep(50);
    expect(pool.stats().waiting).toBe(2);
    controller.abort(new Error('activity cancelled'));
    await expect(second).rejects.toThrow('activity cancelled');
    expect(pool.stats().waiting).toBe(1);
    expect((await first).status).toBe('ok');
    expect((await third).status).toBe('ok');
    expect(fake.events().filter((e) => e.event === 'body')).toHaveLength(2);
  });

  it('kills the process of a running check that is cancelled, and the pool carries on', async () => {
    const { fake, pool } = setup({ bodyDelayMs: 2000 }, { size: 1 });
    const controller = new AbortController();
    const running = pool.check(theorem('slow'), { signal: controller.signal });
    await until(() => fake.count('header') === 1);
    controller.abort(new Error('cancelled'));
    await expect(running).rejects.toThrow('cancelled');
    expect(pool.stats().retired.cancelled).toBe(1);
    await until(() => fake.count('header') === 2);
  });

  it('rejects waiting checks when closed', async () => {
    const { pool } = setup({ bodyDelayMs: 300 }, { size: 1 });
    const first = pool.check(theorem('a')).catch((e: unknown) => e);
    const waiting = pool.check(theorem('b')).catch((e: unknown) => e);
    await sleep(30);
    await pool.close();
    expect(String(await waiting)).toMatch(/shutting down/);
    await first;
    expect(pool.ready()).toBe(false);
  });
});
