import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities';
import type { LlmClient } from '../../engines/llm/client';
import type { Declaration } from '../../engines/retrieval/corpus';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import { rerankWrap, type RerankSettings } from '../../engines/retrieval/rerank';
import { loadConfig } from '../../infra/config';
import { buildRetrieval } from '../../infra/deps';
import type { RetrieveInput } from '../../common/retrieval-types';

const priorOnly = { usagePrior: 1.2, definitions: 0, analogy: 0 };
/** The usage prior for both uses; with `analogy`, the votes of similar theorems (β = 3) too. */
const settings = (analogy: boolean): RerankSettings => ({
  monolithic: { ...priorOnly, analogy: analogy ? 3 : 0 },
  drift: { ...priorOnly, analogy: analogy ? 3 : 0 },
});

const d = (name: string, kind: string, signature: string, uses: string[] = []): Declaration => ({ name, kind, signature, uses });
// "a litter" matches Litter best by its words; NearLitter is what the library's theorems use.
const LIB: Declaration[] = [
  d('Litter', 'structure', 'structure Litter : Type'),
  d('NearLitter', 'structure', 'structure NearLitter : Type'),
  d('Tangle', 'structure', 'structure Tangle : Type'),
  d('t1', 'theorem', 'theorem t1 (N : NearLitter) : True', ['NearLitter']),
  d('t2', 'theorem', 'theorem t2 (N : NearLitter) : True', ['NearLitter']),
  d('t3', 'theorem', 'theorem t3 (N : NearLitter) : True', ['NearLitter']),
  d('tangle_litter', 'theorem', 'theorem tangle_litter (L : Litter) (t : Tangle) : True', ['Litter', 'Tangle']),
];

// "the orbit of a litter": Litter and Orbit match by their words; Allowable shares no word with
// the query, but the theorems about orbits of litters all use it. Only their votes can bring it in.
const ANALOGY_LIB: Declaration[] = [
  d('Litter', 'structure', 'structure Litter : Type'),
  d('NearLitter', 'structure', 'structure NearLitter : Type'),
  d('Orbit', 'structure', 'structure Orbit : Type'),
  d('Allowable', 'structure', 'structure Allowable : Type'),
  d('Tangle', 'structure', 'structure Tangle : Type'),
  d('orbit_litter_smul', 'theorem', 'theorem orbit_litter_smul (L : Litter) (π : Allowable) : True', ['Litter', 'Allowable']),
  d('orbit_litter_inv', 'theorem', 'theorem orbit_litter_inv (L : Litter) (π : Allowable) : True', ['Litter', 'Allowable']),
  d('near_tangle', 'theorem', 'theorem near_tangle (N : NearLitter) (t : Tangle) : True', ['NearLitter', 'Tangle']),
];

let work: string;
let corpusPath: string;
let analogyCorpus: string;
const registries: IndexRegistry[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'driftline-rerank-'));
  corpusPath = join(work, 'lib.jsonl');
  await writeFile(corpusPath, LIB.map((x) => JSON.stringify(x)).join('\n') + '\n');
  analogyCorpus = join(work, 'analogy.jsonl');
  await writeFile(analogyCorpus, ANALOGY_LIB.map((x) => JSON.stringify(x)).join('\n') + '\n');
});
afterAll(async () => {
  for (const r of registries) await r.close();
  await rm(work, { recursive: true, force: true });
});

const names = (hits: { decl: { name: string } }[]) => hits.map((h) => h.decl.name);

describe('re-ranking over stored versions', () => {
  it('a registry with rerankWrap applies the usage prior from the version, not counting excluded theorems', async () => {
    const dir = join(work, 'a');
    const raw = new IndexRegistry({ libraries: [{ name: 'lib', corpusPath }], dir });
    const wrapped = new IndexRegistry({ libraries: [{ name: 'lib', corpusPath }], dir, wrap: rerankWrap(settings(false)) });
    registries.push(raw, wrapped);
    const plain = await raw.get('lib');
    const ranked = await wrapped.get('lib');
    expect(names(await plain.searchPremises('a litter', 2))).toEqual(['Litter', 'NearLitter']);
    expect(names(await ranked.searchPremises('a litter', 2))).toEqual(['NearLitter', 'Litter']);
    // The uses of excluded theorems (the item under evaluation) do not count.
    expect(names(await ranked.searchPremises('a litter', 2, { exclude: ['t1', 't2', 't3'] }))).toEqual(['Litter', 'NearLitter']);
    expect(ranked.kind).toBe('lexical + usage prior α=1.2');
    // The same ranking as the in-memory reference with its built-in prior, for one-word queries
    // (with several words, near-ties may break differently: the store's idf is over the whole
    // version, the reference's over premises only).
    const reference = LexicalIndex.build('lib', LIB);
    for (const exclude of [[], ['t1'], ['t1', 't2', 't3'], ['tangle_litter']]) {
      for (const q of ['a litter', 'near', 'tangle']) {
        const a = await ranked.searchPremises(q, 3, { exclude });
        const b = await reference.searchPremises(q, 3, { exclude });
        expect(names(a), `${q} without ${exclude.join(',')}`).toEqual(names(b));
      }
    }
  });

  it("buildRetrieval's registry re-ranks like the evaluation: the fusion for monolithic retrieval, the usage prior for DRIFT", async () => {
    const config = loadConfig({ env: { DRIFTLINE_LIBRARIES: `lib=${corpusPath}`, DRIFTLINE_DATA_DIR: join(work, 'data') } });
    const { registry, embedder } = await buildRetrieval(config);
    registries.push(registry);
    expect(embedder).toBeUndefined();
    const monolithic = await registry.get('lib', 'monolithic');
    const drift = await registry.get('lib', 'drift');
    expect(monolithic.kind).toBe('lexical + definitions γ=1 + analogy (5 similar theorems vote, β=3)');
    expect(drift.kind).toBe('lexical + usage prior α=1.2');

    const activities = createActivities({ llm: {} as LlmClient, indexes: registry });
    const input = (mode: RetrieveInput['mode']): RetrieveInput => ({
      library: 'lib',
      statement: 'a litter',
      subqueries: [{ phrase: 'a litter', formal: 'Litter' }],
      mode,
      topK: 2,
      exclude: [],
      gold: [],
    });
    const mono = await activities.retrieve(input('monolithic'));
    expect(mono.notes[0]).toMatch(/no embedder configured; definitions γ=1 \+ analogy/);
    const top1 = await activities.retrieve(input('drift'));
    expect(top1.notes[0]).toMatch(/usage prior α=1\.2$/);
    expect(top1.premises.map((p) => p.name)).toEqual(['NearLitter']);
  });

  it('analogy lifts into the top k a premise that only the votes of similar theorems point to', async () => {
    const dir = join(work, 'analogy');
    const library = [{ name: 'orb', corpusPath: analogyCorpus }];
    const withVotes = new IndexRegistry({ libraries: library, dir, wrap: rerankWrap(settings(true)) });
    const without = new IndexRegistry({ libraries: library, dir, wrap: rerankWrap(settings(false)) });
    registries.push(withVotes, without);
    const query = 'the orbit of a litter';
    const plain = names(await (await without.get('orb')).searchPremises(query, 10));
    expect(plain).not.toContain('Allowable'); // no word of the query finds it

    const voted = names(await (await withVotes.get('orb')).searchPremises(query, 2));
    expect(voted).toEqual(['Litter', 'Allowable']);
    // The votes are the theorems': excluded (the item under evaluation), they bring nothing.
    const excluded = names(
      await (await withVotes.get('orb')).searchPremises(query, 2, { exclude: ['orbit_litter_smul', 'orbit_litter_inv'] }),
    );
    expect(excluded).not.toContain('Allowable');
  });
});
