// Providers and roles: the configuration names several providers and a provider per role (env or
// config file, with today's OPENAI_* variables as the provider `default`); a run's requests land on
// the provider of each role, and its LLM activities run on that provider's task queue; a run may
// choose another provider or model per role.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConfigError, loadConfig, missingServices, runLlmSettings } from '../../infra/config';
import { createConfiguredLlm } from '../../infra/deps';
import { runProvidersProblem } from '../../common/run-config';
import { createStack, FIXTURE_CORPUS, startTemporal, type TestStack } from '../helpers/stack';
import { answer, FAKE_MODELS, startFakeOpenAI, toolCall, type FakeOpenAI } from '../fakes/openai-server';

const base = { DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}` };
const dirs: string[] = [];
function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'driftline-providers-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('provider configuration', () => {
  it('keeps OPENAI_BASE_URL and friends working as the provider `default`, which every role uses', () => {
    const config = loadConfig({
      env: {
        ...base,
        OPENAI_BASE_URL: 'http://a.example/v1',
        OPENAI_API_KEY: 'k',
        DRIFTLINE_LLM_REQUESTS_PER_SECOND: '3',
        DRIFTLINE_LLM_SEED: '7',
      },
      root: tempRoot(),
    });
    expect(config.llm.providers).toEqual({
      default: { kind: 'openai', baseURL: 'http://a.example/v1', apiKey: 'k', requestsPerSecond: 3, seed: 7 },
    });
    expect(runLlmSettings(config).providers).toEqual({ decomposer: 'default', formalizer: 'default', judge: 'default', agent: 'default' });
  });

  it('reads DRIFTLINE_PROVIDERS and DRIFTLINE_ROLE_<ROLE>=provider[:model] (a model may contain ":")', () => {
    const config = loadConfig({
      env: {
        ...base,
        OPENAI_BASE_URL: 'http://a.example/v1',
        DRIFTLINE_PROVIDERS: JSON.stringify({
          local: { baseURL: 'http://127.0.0.1:8000/v1', model: 'qwen', requestsPerSecond: 2, temperature: 0.7, maxTokens: 512 },
        }),
        DRIFTLINE_ROLE_FORMALIZER: 'local',
        DRIFTLINE_ROLE_JUDGE: 'local:llama3:8b',
        DRIFTLINE_ROLE_EMBEDDER: 'local:bge-m3',
      },
      root: tempRoot(),
    });
    expect(config.llm.roles).toEqual({
      formalizer: { provider: 'local' },
      judge: { provider: 'local', model: 'llama3:8b' },
      embedder: { provider: 'local', model: 'bge-m3' },
    });
    expect(runLlmSettings(config).providers).toEqual({ decomposer: 'default', formalizer: 'local', judge: 'local', agent: 'default' });
    // The embedder's endpoint is its role's provider.
    expect(config.embeddings).toMatchObject({ baseURL: 'http://127.0.0.1:8000/v1', model: 'bge-m3' });
    const llm = createConfiguredLlm(config);
    expect(llm.modelFor('formalizer')).toBe('qwen');
    expect(llm.modelFor('judge')).toBe('llama3:8b');
    expect(llm.maxTokensFor('judge')).toBe(512);
    expect(llm.baseURLFor('decomposer')).toBe('http://a.example/v1');
  });

  it('reads providers and roles from the config file too', () => {
    const root = tempRoot();
    writeFileSync(
      join(root, 'driftline.config.json'),
      JSON.stringify({
        llm: {
          providers: { big: { baseURL: 'http://big.example/v1', model: 'm-big' } },
          roles: { decomposer: { provider: 'big', model: 'm-small' }, formalizer: 'big' },
        },
      }),
    );
    const config = loadConfig({ env: base, root });
    expect(Object.keys(config.llm.providers)).toEqual(['big']);
    expect(missingServices(config).some((m) => m.startsWith('LLM'))).toBe(false);
    // No default provider: roles without one have none (their runs fail LlmNotConfigured).
    expect(runLlmSettings(config).providers).toEqual({ decomposer: 'big', formalizer: 'big' });
  });

  it('the translator variables become the provider `translator` for the translator role', () => {
    const config = loadConfig({
      env: { ...base, DRIFTLINE_TRANSLATOR_BASE_URL: 'http://t.example/v1', DRIFTLINE_MODEL_TRANSLATOR: 'herald' },
      root: tempRoot(),
    });
    expect(config.llm.providers.translator).toEqual({ kind: 'openai', baseURL: 'http://t.example/v1', model: 'herald' });
    expect(runLlmSettings(config).providers).toEqual({ translator: 'translator' });
  });

  it('refuses a role that names a provider nobody defined, and a provider without a URL', () => {
    expect(() =>
      loadConfig({ env: { ...base, OPENAI_BASE_URL: 'http://a.example/v1', DRIFTLINE_ROLE_JUDGE: 'nope' }, root: tempRoot() }),
    ).toThrow(/DRIFTLINE_ROLE_JUDGE names LLM provider "nope", which is not configured \(configured: "default"/);
    expect(() => loadConfig({ env: { ...base, DRIFTLINE_PROVIDERS: '{"x": {"model": "m"}}' }, root: tempRoot() })).toThrow(ConfigError);
    expect(() =>
      loadConfig({ env: { ...base, DRIFTLINE_PROVIDERS: '{"bad name": {"baseURL": "http://x/v1"}}' }, root: tempRoot() }),
    ).toThrow(/provider name/);
  });

  it('a run may name only configured providers', () => {
    expect(runProvidersProblem({ providers: { judge: 'big' } }, ['default', 'big'])).toBeNull();
    expect(runProvidersProblem({ providers: { judge: 'other' } }, ['default', 'big'])).toMatch(
      /"providers.judge": no LLM provider "other" is configured/,
    );
  });
});

describe('runs across two providers', () => {
  let env: TestWorkflowEnvironment;
  let small: FakeOpenAI;
  let big: FakeOpenAI;
  let s: TestStack;

  beforeAll(async () => {
    env = await startTemporal();
    [small, big] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
    const root = tempRoot();
    const config = loadConfig({
      env: {
        ...base,
        DRIFTLINE_DATA_DIR: join(root, 'data'),
        DRIFTLINE_PROVIDERS: JSON.stringify({
          small: { baseURL: small.url, apiKey: 'key-small', structuredOutput: 'json_schema', seed: 11 },
          big: { baseURL: big.url, apiKey: 'key-big', structuredOutput: 'json_schema', temperature: 0.3 },
        }),
        DRIFTLINE_ROLE_DECOMPOSER: `small:${FAKE_MODELS.decomposer}`,
        DRIFTLINE_ROLE_FORMALIZER: `big:${FAKE_MODELS.formalizer}`,
        DRIFTLINE_ROLE_JUDGE: `big:${FAKE_MODELS.judge}`,
        DRIFTLINE_ROLE_AGENT: `big:${FAKE_MODELS.agent}`,
      },
      root,
    });
    s = await createStack(env, {
      llmClient: () => createConfiguredLlm(config),
      providers: { queues: [{ provider: 'small' }, { provider: 'big' }], roles: runLlmSettings(config).providers },
    });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    await Promise.all([small?.close(), big?.close()]);
    await env?.teardown();
  });

  /** Activity type → the task queue it was scheduled on, from the run's history. */
  async function queues(id: string): Promise<Record<string, string>> {
    const events = (await s.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const out: Record<string, string> = {};
    for (const e of events) {
      const a = e.activityTaskScheduledEventAttributes;
      if (a) out[a.activityType?.name ?? '?'] = a.taskQueue?.name ?? '';
    }
    return out;
  }

  it('sends each role to its provider, with that provider key and parameters, from that provider queue', async () => {
    const result = await s.withWorkers(async () =>
      s.result(await s.start('If p is a prime number then p is at least 2.', {}, { id: 'providers-split' })),
    );
    expect(result.outcome).toBe('faithful');
    expect(small.requests.map((r) => r.model)).toEqual([FAKE_MODELS.decomposer]);
    expect(big.requests.map((r) => r.model)).toEqual([FAKE_MODELS.formalizer, FAKE_MODELS.judge]);
    expect(small.requests[0]!.authorization).toBe('Bearer key-small');
    expect(small.requests[0]!.body.seed).toBe(11);
    expect(big.requests.every((r) => r.authorization === 'Bearer key-big' && r.body.temperature === 0.3 && r.body.seed === undefined)).toBe(
      true,
    );
    expect(await queues('providers-split')).toMatchObject({
      decompose: 'llm-small',
      formalize: 'llm-big',
      judge: 'llm-big',
      retrieve: s.mainQueue,
      compile: s.leanQueue,
    });
  }, 120_000);

  it('a run may move a role to another provider and model (a sweep factor)', async () => {
    const [a, b] = [small.requests.length, big.requests.length];
    const result = await s.withWorkers(async () =>
      s.result(
        await s.start(
          'If p is a prime number then p is at least 2.',
          { providers: { judge: 'small' }, models: { judge: 'fake-judge-two' } },
          { id: 'providers-override' },
        ),
      ),
    );
    expect(result.judge).not.toBeNull();
    expect(small.requests.slice(a).map((r) => r.model)).toEqual([FAKE_MODELS.decomposer, 'fake-judge-two']);
    expect(big.requests.slice(b).map((r) => r.model)).toEqual([FAKE_MODELS.formalizer]);
    expect(await queues('providers-override')).toMatchObject({ decompose: 'llm-small', formalize: 'llm-big', judge: 'llm-small' });
  }, 120_000);

  // A role moved to another provider leaves its route's model behind (a model of one provider
  // need not exist on another): the run names the model too.
  it('an agent run sends its steps to the provider the run names, and its judge to the configured one', async () => {
    const [a, b] = [small.requests.length, big.requests.length];
    const good = 'import Mathlib\n\ntheorem prime_two_le (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry';
    small.script(
      FAKE_MODELS.agent,
      toolCall('write_file', { code: good }),
      toolCall('run_lean'),
      answer('It compiles and says what the text says.\n{"status": "success"}'),
    );
    const result = await s.withWorkers(async () =>
      s.result(
        await s.start(
          'If p is a prime number then p is at least 2.',
          { mode: 'agent', tools: ['write_file', 'run_lean'], providers: { agent: 'small' }, models: { agent: FAKE_MODELS.agent } },
          { id: 'providers-agent' },
        ),
      ),
    );
    expect(result.agent).toMatchObject({ ending: 'success', steps: 3 });
    expect(small.requests.slice(a).map((r) => r.model)).toEqual([FAKE_MODELS.agent, FAKE_MODELS.agent, FAKE_MODELS.agent]);
    expect(big.requests.slice(b).map((r) => r.model)).toEqual([FAKE_MODELS.judge]);
    expect(await queues('providers-agent')).toMatchObject({ agentStep: 'llm-small', judge: 'llm-big', compile: s.leanQueue });
  }, 120_000);
});
