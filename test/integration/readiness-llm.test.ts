// /readyz reports each LLM provider as the main worker found it: the structured-output mode, how
// it was chosen, and a back-off after a timeout. Worker and API are separate processes, so the
// status travels through a small file in the data directory, keyed by provider name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createReadinessCheck } from '../../api/readiness';
import { createLlmClient } from '../../engines/llm/client';
import { readProviderStatuses, writeProviderStatus } from '../../engines/llm/provider-status-file';
import { readinessFor } from '../../infra/api-options';
import { loadConfig } from '../../infra/config';
import { createConfiguredLlm, probeAndRecordProviders } from '../../infra/deps';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FIXTURE_CORPUS } from '../helpers/stack';

const FAKE_MODEL_ENV = {
  DRIFTLINE_MODEL_DECOMPOSER: FAKE_MODELS.decomposer,
  DRIFTLINE_MODEL_FORMALIZER: FAKE_MODELS.formalizer,
  DRIFTLINE_MODEL_JUDGE: FAKE_MODELS.judge,
};

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
      onProviderChange: (s, provider) => writeProviderStatus(file, provider, s),
    });
    const readiness = createReadinessCheck({
      client: healthyTemporal,
      namespace: 'default',
      unbuiltIndexes: async () => [],
      missing: [],
      llmProviders: () => readProviderStatuses(file),
    });

    expect((await readiness()).llm).toBeUndefined(); // the worker has not reported yet
    await llm.probe();
    const report = await readiness();
    expect(report.ready).toBe(true);
    expect(report.llm).toMatchObject({ baseURL: fake.url, structuredOutput: 'json_object', source: 'probe' });
    expect(report.checks.llm).toMatchObject({ ok: true });
    expect(report.checks.llm!.detail).toMatch(
      /^structured output: json_object \(probe: .*json_schema refused \(HTTP 500\); json_object accepted\)$/,
    );

    fake.script(FAKE_MODELS.judge, { content: 'late', delayMs: 1000 });
    await llm.complete('judge', [{ role: 'user', content: 'hi' }]).catch(() => undefined);
    const busy = await readiness();
    expect(busy.ready).toBe(true); // runs wait and resume; the stack itself is fine
    expect(busy.llm!.busyUntil).toBeDefined();
    expect(busy.checks.llm!.detail).toMatch(/^backing off until .* after a timeout; structured output: json_object/);
  });

  it('keeps one entry per provider in the file, also for two providers on one server', () => {
    const file = statusFile();
    const entry = {
      baseURL: 'http://a/v1',
      structuredOutput: 'prompt',
      source: 'configured',
      detail: 'set',
      updatedAt: new Date(0).toISOString(),
      foldSystemPrompt: true,
    } as const;
    writeProviderStatus(file, 'default', entry);
    writeProviderStatus(file, 'big', { ...entry, structuredOutput: 'json_object' });
    writeProviderStatus(file, 'default', { ...entry, foldSystemPrompt: false });
    const all = readProviderStatuses(file);
    expect(Object.keys(all).sort()).toEqual(['big', 'default']);
    expect(all.default).toMatchObject({ structuredOutput: 'prompt', foldSystemPrompt: false });
    expect(all.big).toMatchObject({ structuredOutput: 'json_object' });
  });

  it('reports every configured provider, each as the worker found it, and none that is no longer configured', async () => {
    const refusing = await fakeServer({ llamaCpp: { refuseJsonSchema: true } });
    const other = await fakeServer({});
    const dataDir = mkdtempSync(join(tmpdir(), 'driftline-providers-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const providers = { default: { baseURL: refusing.url }, small: { baseURL: other.url, structuredOutput: 'prompt' } };
    const env = {
      DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}`,
      DRIFTLINE_DATA_DIR: dataDir,
      DRIFTLINE_PROVIDERS: JSON.stringify(providers),
      ...FAKE_MODEL_ENV,
    };
    const config = loadConfig({ env, root: dataDir });
    const readiness = readinessFor(config, healthyTemporal, { unbuiltIndexes: () => [] });
    expect((await readiness()).llmProviders).toBeUndefined(); // the worker has not reported yet

    // A provider from an earlier configuration is still in the file: not reported.
    writeProviderStatus(join(dataDir, 'llm-provider.json'), 'gone', {
      baseURL: 'http://gone/v1',
      structuredOutput: 'prompt',
      source: 'configured',
      detail: 'old',
      updatedAt: new Date(0).toISOString(),
      foldSystemPrompt: false,
    });
    const statuses = await probeAndRecordProviders(config, createConfiguredLlm(config));
    expect(Object.keys(statuses).sort()).toEqual(['default', 'small']);

    const report = await readiness();
    expect(report.ready).toBe(true);
    expect(Object.keys(report.llmProviders!).sort()).toEqual(['default', 'small']);
    expect(report.llmProviders!.default).toMatchObject({ baseURL: refusing.url, structuredOutput: 'json_object', source: 'probe' });
    // Set by configuration, so never probed and never changed: recorded all the same.
    expect(report.llmProviders!.small).toMatchObject({ baseURL: other.url, structuredOutput: 'prompt', source: 'configured' });
    expect(report.llm).toEqual(report.llmProviders!.default);
    expect(report.checks.llm!.detail).toMatch(/^structured output: json_object \(probe: /);
    expect(report.checks['llm:small']).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^structured output: prompt \(configured: set by configuration \(.*DRIFTLINE_PROVIDERS\)\)$/),
    });
    expect(report.checks['llm:gone']).toBeUndefined();
    // Only the refusing server saw the probe's requests.
    expect(other.requests.length).toBe(0);
  });
});
