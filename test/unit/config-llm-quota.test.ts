// The three quota settings per LLM provider: the `default` provider's from DRIFTLINE_LLM_*, a
// named provider's from its entry, and how they become its budget's limits and its queue's rate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, queueRequestsPerSecond } from '../../infra/config';
import { providerLimits } from '../../infra/deps';
import { FIXTURE_CORPUS } from '../helpers/stack';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function load(env: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'driftline-quota-config-'));
  dirs.push(root);
  return loadConfig({ env: { DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}`, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', ...env }, root });
}

describe('LLM quota settings', () => {
  it('give the default provider its three limits', () => {
    const config = load({
      DRIFTLINE_LLM_TOKENS_PER_MINUTE: '30000',
      DRIFTLINE_LLM_REQUESTS_PER_MINUTE: '500',
      DRIFTLINE_LLM_MAX_IN_FLIGHT: '4',
    });
    const p = config.llm.providers.default!;
    expect(p).toMatchObject({ tokensPerMinute: 30_000, requestsPerMinute: 500, maxInFlight: 4 });
    expect(providerLimits(p)).toEqual({ tokensPerMinute: 30_000, requestsPerMinute: 500, maxInFlight: 4 });
    // The queue's rate sits above the budget's, which holds the rate exactly.
    expect(queueRequestsPerSecond(p)).toBeCloseTo((500 / 60) * 1.25);
  });

  it('take the lower request rate when both per second and per minute are given', () => {
    const p = load({ DRIFTLINE_LLM_REQUESTS_PER_SECOND: '2', DRIFTLINE_LLM_REQUESTS_PER_MINUTE: '600' }).llm.providers.default!;
    expect(providerLimits(p).requestsPerMinute).toBe(120);
    expect(queueRequestsPerSecond(p)).toBe(2);
    const only = load({ DRIFTLINE_LLM_REQUESTS_PER_SECOND: '4' }).llm.providers.default!;
    expect(providerLimits(only)).toEqual({ requestsPerMinute: 240 });
    expect(queueRequestsPerSecond(only)).toBe(4);
  });

  it("come from a named provider's entry", () => {
    const config = load({
      DRIFTLINE_PROVIDERS: JSON.stringify({ local: { baseURL: 'http://127.0.0.1:8000/v1', maxInFlight: 4, tokensPerMinute: 100000 } }),
    });
    expect(providerLimits(config.llm.providers.local!)).toEqual({ tokensPerMinute: 100_000, maxInFlight: 4 });
    expect(providerLimits(config.llm.providers.default!)).toEqual({});
  });

  it('refuse what is not a limit', () => {
    expect(() => load({ DRIFTLINE_LLM_MAX_IN_FLIGHT: '0' })).toThrow(ConfigError);
    expect(() => load({ DRIFTLINE_LLM_TOKENS_PER_MINUTE: '-5' })).toThrow(ConfigError);
    expect(() => load({ DRIFTLINE_PROVIDERS: JSON.stringify({ x: { baseURL: 'http://a/v1', maxInFlight: 1.5 } }) })).toThrow(ConfigError);
  });
});
