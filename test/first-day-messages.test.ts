// What a new user reads on the first day: without an LLM the messages say how to run the local
// model; on the local model they name its file, not the in-process transport's placeholder URL.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, missingServices } from '../infra/config';
import { closeLocalModels, createConfiguredLlm } from '../infra/deps';
import { createLlmClient } from '../engines/llm/client';
import { LOCAL_BASE_URL } from '../engines/llm/local-fetch';
import { FIXTURE_CORPUS } from './helpers/stack';

const dir = mkdtempSync(join(tmpdir(), 'driftline-first-day-'));
afterAll(async () => {
  await closeLocalModels();
  rmSync(dir, { recursive: true, force: true });
});
const base = { DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}`, DRIFTLINE_DATA_DIR: dir };

describe('with no LLM configured', () => {
  it('says how to use the local model, at start and when a run calls the LLM', async () => {
    const config = loadConfig({ env: base });
    expect(missingServices(config).find((m) => m.startsWith('LLM:'))).toMatch(/npm run setup:llm.*DRIFTLINE_LLM_PROVIDER=local/);
    await expect(createLlmClient(null).chat('formalizer', [{ role: 'user', content: 'x' }])).rejects.toThrow(
      /No LLM is configured\. Set OPENAI_BASE_URL .*`npm run setup:llm` once, then start with DRIFTLINE_LLM_PROVIDER=local/,
    );
  });
});

describe('on the local model', () => {
  it('names the model file and its name, never the placeholder URL', () => {
    // Any file stands for the GGUF here: nothing is loaded until a request.
    const model = join(dir, 'tiny-model-q4.gguf');
    copyFileSync(FIXTURE_CORPUS, model);
    const config = loadConfig({ env: { ...base, DRIFTLINE_LLM_PROVIDER: 'local', DRIFTLINE_LOCAL_LLM_PATH: model } });
    const llm = createConfiguredLlm(config);
    expect(llm.baseURLFor('formalizer')).toBe(`${model} (local, in process)`);
    expect(llm.baseURLFor('judge')).not.toContain(new URL(LOCAL_BASE_URL).host);
    expect(llm.modelFor('formalizer')).toBe('tiny-model-q4');
    // A model the configuration names for the provider still wins.
    const named = loadConfig({ env: { ...base, DRIFTLINE_PROVIDERS: JSON.stringify({ small: { kind: 'local', modelPath: model, model: 'gemma' } }), DRIFTLINE_ROLE_JUDGE: 'small' } });
    expect(createConfiguredLlm(named).modelFor('judge')).toBe('gemma');
  });
});
