// What a new user reads on the first day: without an LLM the messages say how to run the local
// model; on the local model they name its file, not the in-process transport's placeholder URL.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, missingServices } from '../../infra/config';
import { closeLocalModels, createConfiguredLlm } from '../../infra/deps';
import { createLlmClient } from '../../engines/llm/client';
import { LOCAL_BASE_URL } from '../../engines/llm/local-fetch';
import { FIXTURE_CORPUS } from '../helpers/stack';

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
    const named = loadConfig({
      env: {
        ...base,
        DRIFTLINE_PROVIDERS: JSON.stringify({ small: { kind: 'local', modelPath: model, model: 'gemma' } }),
        DRIFTLINE_ROLE_JUDGE: 'small',
      },
    });
    expect(createConfiguredLlm(named).modelFor('judge')).toBe('gemma');
  });
});

describe('the driftline command, a client', () => {
  const cli = fileURLToPath(new URL('../../bin/driftline.js', import.meta.url));
  const bare = () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DRIFTLINE_DATA_DIR: dir, TEMPORAL_ADDRESS: '127.0.0.1:1' };
    delete env.DRIFTLINE_LIBRARIES;
    delete env.DRIFTLINE_SHARED_DATA;
    return env;
  };

  it("applies the API's statement limit before it contacts anything", () => {
    const r = spawnSync(process.execPath, [cli, 'formalize', 'é'.repeat(20_001)], { env: bare(), encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('driftline: the statement has 20001 characters; at most 20000 are accepted (DRIFTLINE_MAX_STATEMENT_CHARS)');
    const limited = spawnSync(process.execPath, [cli, 'formalize', 'x'.repeat(101)], {
      env: { ...bare(), DRIFTLINE_MAX_STATEMENT_CHARS: '100' },
      encoding: 'utf8',
    });
    expect(limited.stderr).toContain('at most 100 are accepted');
  });

  it('needs neither DRIFTLINE_LIBRARIES nor the corpus file: it gets as far as Temporal', () => {
    const r = spawnSync(process.execPath, [cli, 'formalize', 'Every prime greater than 2 is odd.'], {
      env: bare(),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Cannot reach Temporal at 127.0.0.1:1');
    expect(r.stderr).not.toMatch(/DRIFTLINE_LIBRARIES|corpus file/);
  });
});
