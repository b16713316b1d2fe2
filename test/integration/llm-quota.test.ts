// The shared LLM budget against a provider that enforces an account's limits (the fake OpenAI
// server with limits): two processes sharing one budget keep to one limit; the provider's
// headers lower a configured limit that is too high; a limit that drops mid-run is followed; a
// provider that says nothing but 429 is slowed down for every call. Real HTTP, the real client.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBudgetStore, snapshot } from '../../engines/llm/budget';
import { startFakeOpenAI, type FakeOpenAI, type QuotaRecord } from '../fakes/openai-server';
import { drive, driveInChild } from '../helpers/quota-driver';

let fake: FakeOpenAI | undefined;
let dir: string | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Tokens per minute the provider served (replies finished) between `from` and `to`. */
function tokensPerMinute(log: QuotaRecord[], from: number, to: number): number {
  const tokens = log.filter((r) => r.status === 200 && r.doneAt >= from && r.doneAt < to).reduce((n, r) => n + r.tokens, 0);
  return (tokens * 60_000) / (to - from);
}

function share429(log: QuotaRecord[]): number {
  return log.filter((r) => r.status === 429).length / Math.max(1, log.length);
}

describe('the shared LLM budget', () => {
  it('two processes sharing one budget (SQLite) keep together to one tokens-per-minute limit', async () => {
    fake = await startFakeOpenAI({ limits: { tokensPerMinute: 60_000, firstTokenMs: 50, msPerToken: 4 } });
    dir = mkdtempSync(join(tmpdir(), 'driftline-quota-'));
    const opts = {
      url: fake.url,
      limits: { tokensPerMinute: 60_000 },
      durationMs: 14_000,
      concurrency: 4,
      sqlite: join(dir, 'results.sqlite'),
    };
    const started = Date.now();
    const results = await Promise.all([driveInChild(opts), driveInChild(opts)]);
    const log = fake.quota!.log;
    // Both processes were served, and never refused.
    for (const r of results) {
      expect(r.answered).toBeGreaterThan(5);
      expect(r.failed).toBe(0);
    }
    expect(share429(log)).toBe(0);
    // After the first burst (ten seconds of the limit), the pair ran at the one limit: a budget
    // per process would have run at twice it.
    const firstDone = Math.min(...log.map((r) => r.doneAt));
    const lastDone = Math.max(...log.map((r) => r.doneAt));
    expect(lastDone - started).toBeGreaterThan(8000);
    const rate = tokensPerMinute(log, firstDone + 4000, lastDone);
    expect(rate).toBeLessThan(60_000 * 1.1);
    expect(rate).toBeGreaterThan(60_000 * 0.8);
  }, 60_000);

  it("follows the provider's headers when its real limit is below the configured one", async () => {
    fake = await startFakeOpenAI({ limits: { tokensPerMinute: 30_000, firstTokenMs: 50, msPerToken: 4 } });
    const store = new MemoryBudgetStore();
    const result = await drive(store, { url: fake.url, limits: { tokensPerMinute: 120_000 }, durationMs: 12_000, concurrency: 6 });
    const log = fake.quota!.log;
    expect(result.failed).toBe(0);
    expect(share429(log)).toBeLessThanOrEqual(0.02);
    const firstDone = Math.min(...log.map((r) => r.doneAt));
    const rate = tokensPerMinute(log, firstDone + 5000, Math.max(...log.map((r) => r.doneAt)));
    expect(rate).toBeLessThan(30_000 * 1.1);
    expect(rate).toBeGreaterThan(30_000 * 0.8);
    const snap = snapshot('default', (await store.states()).get('default')!, { tokensPerMinute: 120_000 }, Date.now());
    expect(snap.tokensPerMinute).toMatchObject({ configured: 120_000, reported: 30_000, effective: 30_000 });
    expect(snap.binding).toBe('tokens');
  }, 60_000);

  it('follows a limit that drops mid-run, with few 429s', async () => {
    fake = await startFakeOpenAI({ limits: { tokensPerMinute: 60_000, firstTokenMs: 50, msPerToken: 4 } });
    const store = new MemoryBudgetStore();
    const started = Date.now();
    const dropAt = started + 5000;
    const drop = setTimeout(() => fake!.quota!.set({ ...fake!.quota!.current, tokensPerMinute: 15_000 }), 5000);
    const result = await drive(store, { url: fake.url, limits: { tokensPerMinute: 60_000 }, durationMs: 16_000, concurrency: 6 });
    clearTimeout(drop);
    const log = fake.quota!.log;
    expect(result.failed).toBe(0);
    expect(share429(log)).toBeLessThanOrEqual(0.05);
    const rate = tokensPerMinute(log, dropAt + 4000, Math.max(...log.map((r) => r.doneAt)));
    expect(rate).toBeLessThan(15_000 * 1.15);
    expect(rate).toBeGreaterThan(15_000 * 0.7);
    expect((await store.states()).get('default')!.learnedTokensPerMinute).toBe(15_000);
  }, 60_000);

  it('slows every call down after 429s from a provider that sends no rate-limit headers', async () => {
    fake = await startFakeOpenAI({ limits: { tokensPerMinute: 30_000, burstSeconds: 5, firstTokenMs: 50, msPerToken: 4, headers: false } });
    const store = new MemoryBudgetStore();
    const result = await drive(store, { url: fake.url, limits: {}, durationMs: 14_000, concurrency: 6 });
    const log = fake.quota!.log;
    expect(result.failed).toBe(0);
    const state = (await store.states()).get('default')!;
    expect(state.throttled).toBeGreaterThan(0);
    // It learnt a rate from what went through, and kept 429s rare after the first.
    expect(state.learnedTokensPerMinute).toBeGreaterThan(0);
    expect(share429(log)).toBeLessThan(0.15);
  }, 60_000);
});
