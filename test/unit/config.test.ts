// Configuration: defaults that run on one machine, environment over file, and errors that name
// the bad setting.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, missingServices, parseLibraries, publicDataDir } from '../../infra/config';
import { FIXTURE_CORPUS } from '../helpers/stack';

const dirs: string[] = [];
function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'driftline-config-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const base = { DRIFTLINE_LIBRARIES: `mini=${FIXTURE_CORPUS}` };

describe('loadConfig', () => {
  it('has defaults that run on one machine', () => {
    const config = loadConfig({ env: base, root: tempRoot() });
    expect(config.api).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(config.temporal).toMatchObject({ devServerPort: 7233, uiPort: 8233, namespace: 'default' });
    expect(config.temporal.address).toBeUndefined();
    expect(config.libraries).toEqual([{ name: 'mini', corpus: FIXTURE_CORPUS }]);
    expect(config.lean.replCmd).toBeUndefined();
    expect(missingServices(config)).toHaveLength(2);
  });

  it('serves the default library from the pulled data directory, once it is there', () => {
    const root = tempRoot();
    // Nothing pulled yet: no library, and what to do about it is said (not an exit).
    const bare = loadConfig({ env: {}, root });
    expect(bare.libraries).toEqual([]);
    expect(publicDataDir(bare)).toBe(join(root, '.driftline', 'data'));
    const note = missingServices(bare).find((m) => m.startsWith('Library:'));
    expect(note).toContain(`needs ${join(root, '.driftline', 'data', 'connf', 'library.jsonl')}, which does not exist`);
    expect(note).toContain('npx driftline data pull connf');
    expect(note).toContain('DRIFTLINE_DATA_MIRROR');
    // A client that never reads the corpus still knows the library's name.
    expect(loadConfig({ env: {}, root, skipFileChecks: true }).libraries.map((l) => l.name)).toEqual(['connf']);
    mkdirSync(join(root, '.driftline', 'data', 'connf'), { recursive: true });
    copyFileSync(FIXTURE_CORPUS, join(root, '.driftline', 'data', 'connf', 'library.jsonl'));
    expect(loadConfig({ env: {}, root }).libraries).toEqual([
      { name: 'connf', corpus: join(root, '.driftline', 'data', 'connf', 'library.jsonl') },
    ]);
    // DRIFTLINE_DATA_DIR moves it, DRIFTLINE_SHARED_DATA overrides it.
    expect(loadConfig({ env: { DRIFTLINE_DATA_DIR: join(root, 'elsewhere') }, root }).libraries).toEqual([]);
    const shared = join(root, 'shared');
    mkdirSync(join(shared, 'connf'), { recursive: true });
    copyFileSync(FIXTURE_CORPUS, join(shared, 'connf', 'library.jsonl'));
    const env = { DRIFTLINE_SHARED_DATA: shared };
    const overridden = loadConfig({ env, root });
    expect(publicDataDir(overridden)).toBe(shared);
    expect(overridden.libraries).toEqual([{ name: 'connf', corpus: join(shared, 'connf', 'library.jsonl') }]);
  });

  it('still refuses configured libraries that are missing or none at all', () => {
    expect(() => loadConfig({ env: { DRIFTLINE_LIBRARIES: 'x=/nowhere/x.jsonl' }, root: tempRoot() })).toThrow(
      /Library "x": corpus file \/nowhere\/x\.jsonl does not exist/,
    );
    const root = tempRoot();
    writeFileSync(join(root, 'driftline.config.json'), JSON.stringify({ libraries: [] }));
    expect(() => loadConfig({ env: {}, root })).toThrow(/at least one library is needed/);
  });

  it('reads the libraries as name=path pairs, the first being the default', () => {
    expect(parseLibraries('a=x.jsonl, b=/y/z.jsonl')).toEqual([
      { name: 'a', corpus: 'x.jsonl' },
      { name: 'b', corpus: '/y/z.jsonl' },
    ]);
    expect(() => parseLibraries('justapath.jsonl')).toThrow(/not of the form name=path/);
  });

  it('lets the environment override the config file', () => {
    const root = tempRoot();
    writeFileSync(join(root, 'driftline.config.json'), JSON.stringify({ api: { port: 9000 }, llm: { models: { judge: 'file-judge' } } }));
    const fromFile = loadConfig({ env: base, root });
    expect(fromFile.api.port).toBe(9000);
    expect(fromFile.llm.models.judge).toBe('file-judge');
    const overridden = loadConfig({ env: { ...base, PORT: '9100', DRIFTLINE_MODEL_JUDGE: 'env-judge' }, root });
    expect(overridden.api.port).toBe(9100);
    expect(overridden.llm.models.judge).toBe('env-judge');
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT \(api\.port\)/],
    [{ OPENAI_BASE_URL: 'not a url' }, /OPENAI_BASE_URL \(llm\.baseURL\): OPENAI_BASE_URL must be a URL/],
    [{ DRIFTLINE_LLM_MAX_REASKS: '99' }, /DRIFTLINE_LLM_MAX_REASKS/],
    [{ DRIFTLINE_LLM_STRUCTURED_OUTPUT: 'xml' }, /DRIFTLINE_LLM_STRUCTURED_OUTPUT \(llm\.structuredOutput\)/],
    [{ DRIFTLINE_MAX_TOKENS_FORMALIZER: '0' }, /DRIFTLINE_MAX_TOKENS_FORMALIZER \(llm\.maxTokens\.formalizer\)/],
    [{ DRIFTLINE_LLM_FOLD_SYSTEM_PROMPT: 'maybe' }, /DRIFTLINE_LLM_FOLD_SYSTEM_PROMPT/],
    [{ DRIFTLINE_LIBRARIES: 'mini=/no/such/file.jsonl' }, /Library "mini": corpus file \/no\/such\/file.jsonl does not exist/],
    [{ DRIFTLINE_LIBRARIES: `a=${FIXTURE_CORPUS},a=${FIXTURE_CORPUS}` }, /library "a" is named twice/],
    [{ DRIFTLINE_CONFIG: '/no/such/config.json' }, /DRIFTLINE_CONFIG=\/no\/such\/config.json does not exist/],
    ...['0', '-0.5', '1.5', '"half"'].map((factor): [Record<string, string>, RegExp] => [
      { DRIFTLINE_LLM_PRICES: `{"gpt-4.1": {"prompt": 2, "completion": 8, "batchFactor": ${factor}}}` },
      /DRIFTLINE_LLM_PRICES \(llm\.prices\.gpt-4\.1\.batchFactor\): batchFactor is the batch price as a fraction of the synchronous one, a number above 0 and at most 1/,
    ]),
  ])('refuses %o with an error naming the setting', (env, message) => {
    expect(() => loadConfig({ env: { ...base, ...env }, root: tempRoot() })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { ...base, ...env }, root: tempRoot() })).toThrow(message);
  });

  it("reads a model's batch factor from DRIFTLINE_LLM_PRICES, and leaves it to the default when none is given", () => {
    const prices = '{"gpt-4.1": {"prompt": 2, "completion": 8, "batchFactor": 0.4}, "small": {"prompt": 0.1, "completion": 0.4}}';
    const config = loadConfig({ env: { ...base, DRIFTLINE_LLM_PRICES: prices }, root: tempRoot() });
    expect(config.llm.prices).toEqual({
      'gpt-4.1': { prompt: 2, completion: 8, batchFactor: 0.4 },
      small: { prompt: 0.1, completion: 0.4 },
    });
    const one = loadConfig({
      env: { ...base, DRIFTLINE_LLM_PRICES: '{"m": {"prompt": 1, "completion": 1, "batchFactor": 1}}' },
      root: tempRoot(),
    });
    expect(one.llm.prices.m!.batchFactor).toBe(1);
  });

  it('has LLM provider defaults (token limits per role, auto structured output) that the environment and the file override', () => {
    const defaults = loadConfig({ env: base, root: tempRoot() }).llm;
    expect(defaults).toMatchObject({
      timeoutMs: 120_000,
      maxReasks: 2,
      maxTokens: { decomposer: 1024, formalizer: 2048, judge: 1024, agent: 2048, translator: 2048 },
      structuredOutput: 'auto',
      foldSystemPrompt: false,
      busyBackoffMs: 60_000,
    });
    const root = tempRoot();
    writeFileSync(join(root, 'driftline.config.json'), JSON.stringify({ llm: { maxTokens: { judge: 512 }, foldSystemPrompt: true } }));
    const set = loadConfig({
      env: {
        ...base,
        DRIFTLINE_MAX_TOKENS_FORMALIZER: '4000',
        DRIFTLINE_MAX_TOKENS_AGENT: '3000',
        DRIFTLINE_LLM_STRUCTURED_OUTPUT: 'json_object',
        DRIFTLINE_LLM_BUSY_BACKOFF_MS: '5000',
      },
      root,
    }).llm;
    expect(set).toMatchObject({
      maxTokens: { decomposer: 1024, formalizer: 4000, judge: 512, agent: 3000, translator: 2048 },
      structuredOutput: 'json_object',
      foldSystemPrompt: true,
      busyBackoffMs: 5000,
    });
  });

  it('says when the config file is not JSON', () => {
    const root = tempRoot();
    writeFileSync(join(root, 'driftline.config.json'), '{ port: 1 ');
    expect(() => loadConfig({ env: base, root })).toThrow(/driftline.config.json is not valid JSON/);
  });

  it('lists nothing as missing once an LLM and a Lean REPL are configured', () => {
    const config = loadConfig({ env: { ...base, OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', LEAN_REPL_CMD: 'repl' }, root: tempRoot() });
    expect(missingServices(config)).toEqual([]);
  });
});
