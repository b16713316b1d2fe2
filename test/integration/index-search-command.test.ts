// `driftline index search` as a person uses it, on the real ConNF library: by default ranked for
// a person (names first, engines/retrieval/interactive-search.ts), `--ranking run` as a run's
// retrieval ranks (usage prior, analogy), `--ranking store` the store's own score.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { EmbeddedStore } from '../../engines/retrieval/stores/embedded';
import { publicData } from '../helpers/public-data';

const cli = fileURLToPath(new URL('../../bin/driftline.js', import.meta.url));
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-index-search-'));
  const corpus = join(publicData(), 'connf', 'library.jsonl');
  // The index the command finds: built where the configuration's embedded store lives.
  const registry = new IndexRegistry({
    libraries: [{ name: 'connf', corpusPath: corpus }],
    store: new EmbeddedStore(join(dir, 'indexes', 'embedded')),
  });
  await registry.open('connf');
  await registry.close();
  env = { ...process.env, DRIFTLINE_LIBRARIES: `connf=${corpus}`, DRIFTLINE_DATA_DIR: dir };
  delete env.DRIFTLINE_SHARED_DATA;
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function search(...args: string[]): { ranking: string; hits: { name: string }[] } {
  const out = spawnSync(process.execPath, [cli, 'index', 'search', 'near-litter', '-k', '5', '--json', ...args], {
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(out.status, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as { ranking: string; hits: { name: string }[] };
}

describe('driftline index search', () => {
  it('ranks near-litter names first by default, and a run ranking puts ConNF.Params first', () => {
    const person = search();
    expect(person.ranking).toBe('name');
    const names = person.hits.map((h) => h.name);
    expect(names).toContain('ConNF.IsNearLitter');
    expect(names).not.toContain('ConNF.Params');
    for (const name of names) expect(name.toLowerCase()).toContain('nearlitter');

    const run = search('--ranking', 'run');
    expect(run.ranking).toBe('run');
    expect(run.hits[0]!.name).toBe('ConNF.Params');
    // --no-rerank, as before: the store's own score.
    expect(search('--no-rerank').ranking).toBe('store');
  });

  it('refuses an unknown ranking, naming the choices', () => {
    const out = spawnSync(process.execPath, [cli, 'index', 'search', 'x', '--ranking', 'best'], { env, encoding: 'utf8' });
    expect(out.status).not.toBe(0);
    expect(out.stderr).toMatch(/Allowed choices are name, run, store/);
  });
});
