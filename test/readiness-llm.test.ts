// /readyz reports the LLM provider as the main worker found it: the structured-output mode, how
// it was chosen, and a back-off after a timeout. Worker and API are separate processes, so the
// status travels through a small file in the data directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createReadinessCheck } from '../api/readiness';
import { createLlmClient } from '../engines/llm/client';
import { readProviderStatus, writeProviderStatus } from '../engines/llm/provider-status-file';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server';

// Temporal answers and both queues have pollers: only the LLM part is under test here.
const healthyTemporal = {
  workflowService: { getSystemInfo: async () => ({}), describeTaskQueue: async () => ({ pollers: [{}] }) },
} as unknown as Client;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function fakeServer(opts: Parameters<typeof startFakeOpenAI>[0]): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI(opts);
  cleanups.push(() => fake.close());
  return fake;
}

function statusFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'driftline-provider-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'llm-provider.json');
}

describe('/readyz and the LLM provider', () => {
  it('reports the mode the probe found and, after a timeout, the back-off', async () => {
    const fake = await fakeServer({ llamaCpp: { refuseJsonSchema: true } });
    const file = statusFile();
    const llm = createLlmClient({
      baseURL: fake.url,
      models: FAKE_MODELS,
      timeoutMs: 200,
      maxReasks: 0,
      busyBackoffMs: 60_000,
      onProviderChange: (s) => writeProviderStatus(file, s),
    });
    const readiness = createReadinessCheck({ client: healthyTemporal, namespace: 'default', unbuiltIndexes: async () => [], missing: [], llm: () => readProviderStatus(file, fake.url) });

    expect((await readiness()).llm).toBeUndefined(); // the worker has not reported yet
    await llm.probe();
    const report = await readiness();
    expect(report.ready).toBe(true);
    expect(report.llm).toMatchObject({ baseURL: fake.url, structuredOutput: 'json_object', source: 'probe' });
    expect(report.checks.llm).toMatchObject({ ok: true });
    expect(report.checks.llm!.detail).toMatch(/^structured output: json_object \(probe: .*json_schema refused \(HTTP 500\); json_object accepted\)$/);

    fake.script(FAKE_MODELS.judge, { content: 'late', delayMs: 1000 });
    await llm.complete('judge', [{ role: 'user', content: 'hi' }]).catch(() => undefined);
    const busy = await readiness();
    expect(busy.ready).toBe(true); // runs wait and resume; the stack itself is fine
    expect(busy.llm!.busyUntil).toBeDefined();
    expect(busy.checks.llm!.detail).toMatch(/^backing off until .* after a timeout; structured output: json_object/);
  });

  it('keeps one entry per provider in the file', () => {
    const file = statusFile();
    const entry = { structuredOutput: 'prompt', source: 'configured', detail: 'set', updatedAt: new Date(0).toISOString(), foldSystemPrompt: true } as const;
    writeProviderStatus(file, { ...entry, baseURL: 'http://a/v1' });
    writeProviderStatus(file, { ...entry, baseURL: 'http://b/v1', structuredOutput: 'json_object' });
    expect(readProviderStatus(file, 'http://a/v1')?.structuredOutput).toBe('prompt');
    expect(readProviderStatus(file, 'http://b/v1')?.structuredOutput).toBe('json_object');
    expect(readProviderStatus(file, 'http://c/v1')).toBeUndefined();
  });
});
