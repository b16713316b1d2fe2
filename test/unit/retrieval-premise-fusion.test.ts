// The fused premise ranking (premise-fusion.ts): its parts on their own, and that nothing it
// learns from the library's theorems crosses the leave-out policy.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeaveOutPolicy } from '../../common/retrieval-types';
import type { Declaration } from '../../engines/retrieval/corpus';
import { isTheorem } from '../../engines/retrieval/corpus';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { FusionIndex, fusePremiseScores, queryCoverage, type FusionWeights } from '../../engines/retrieval/premise-fusion';
import { DEFAULT_RERANK, rerank, rerankWrap, type RerankSettings } from '../../engines/retrieval/rerank';
import { retrievePremises } from '../../engines/retrieval/retrieve-premises';
import { UsageTable } from '../../engines/retrieval/usage-prior';

const d = (name: string, kind: string, signature: string, uses: string[] = [], extra: Partial<Declaration> = {}): Declaration => ({
  name,
  kind,
  signature,
  uses,
  ...extra,
});
const none: FusionWeights = { definitions: 0, analogy: 0, usagePrior: 0 };
const premisesOnly = (name: string) => !name.endsWith('_thm');

describe('fusePremiseScores', () => {
  const hits = [
    { name: 'cloud', score: 10, uses: ['Params', 'Tangle', 'cloud_aux_thm'] },
    { name: 'near', score: 5, uses: ['Params'] },
    { name: 'far', score: 1, uses: ['Far'] },
  ];

  it('is the lexical ranking scaled by its best score when every part is off', () => {
    expect(fusePremiseScores({ hits, neighbours: [], isPremise: premisesOnly, weights: none, expandFrom: 20 })).toEqual([
      { name: 'cloud', score: 1 },
      { name: 'near', score: 0.5 },
      { name: 'far', score: 0.1 },
    ]);
  });

  it('lets the best-matching definitions vote for what they use, by (score / best)², only the r best', () => {
    const out = fusePremiseScores({ hits, neighbours: [], isPremise: premisesOnly, weights: { ...none, definitions: 1 }, expandFrom: 2 });
    const score = new Map(out.map((s) => [s.name, s.score]));
    // Params: 1² (cloud) + 0.5² (near) = 1.25 votes, the most; Tangle: 1 vote of cloud.
    expect(score.get('Params')).toBeCloseTo(1, 12);
    expect(score.get('Tangle')).toBeCloseTo(1 / 1.25, 12);
    expect(score.has('Far')).toBe(false); // `far` is third, and only the r = 2 best vote
    expect(score.has('cloud_aux_thm')).toBe(false); // never a theorem
    expect(out[0]).toEqual({ name: 'cloud', score: 1 });
  });

  it('weighs a similar theorem by how much of the query it covers, squared, over the neighbours', () => {
    const weights = { ...none, analogy: 3 };
    const out = fusePremiseScores({
      hits,
      neighbours: [
        { closeness: 1, uses: ['Allowable'] },
        { closeness: 0.5, uses: ['Allowable', 'Orbit'] },
      ],
      isPremise: premisesOnly,
      weights,
      expandFrom: 20,
    });
    const score = new Map(out.map((s) => [s.name, s.score]));
    expect(score.get('Allowable')).toBeCloseTo((3 * (1 + 0.25)) / 2, 12);
    expect(score.get('Orbit')).toBeCloseTo((3 * 0.25) / 2, 12);
    // Loose neighbours carry little: the same votes from neighbours covering a tenth of the query.
    const loose = fusePremiseScores({
      hits,
      neighbours: [{ closeness: 0.1, uses: ['Allowable'] }],
      isPremise: premisesOnly,
      weights,
      expandFrom: 20,
    });
    expect(loose.find((s) => s.name === 'Allowable')!.score).toBeCloseTo(3 * 0.01, 12);
  });

  it('adds α times the prior to every scored premise', () => {
    const out = fusePremiseScores({
      hits,
      neighbours: [],
      isPremise: premisesOnly,
      prior: (n) => (n === 'far' ? 1 : 0),
      weights: { ...none, usagePrior: 1.2 },
      expandFrom: 20,
    });
    expect(out[0]).toEqual({ name: 'far', score: 1.3 });
  });
});

describe('queryCoverage', () => {
  it("is the share of the query's distinct tokens found in the declaration", () => {
    const t = d('Lib.cloud_mono', 'theorem', 'theorem Lib.cloud_mono : Lib.cloud s ⊆ Lib.cloud t', [], {
      informal: 'The cloud map is monotone.',
    });
    expect(queryCoverage(new Set(['cloud', 'monotone']), t)).toBe(1);
    expect(queryCoverage(new Set(['cloud', 'litter']), t)).toBe(0.5);
    expect(queryCoverage(new Set(), t)).toBe(0);
  });
});

describe('FusionIndex', () => {
  // "the cloud of a set": Cloud matches; Params shares no word with the query, but Cloud is
  // built on it, so the definitions' votes bring it in.
  const LIB: Declaration[] = [
    d('Params', 'class', 'class Params : Type'),
    d('Cloud', 'def', 'def Cloud [Params] (s : Set Tangle) : Set Tangle', ['Params', 'Tangle']),
    d('Tangle', 'structure', 'structure Tangle [Params] : Type', ['Params']),
    d('Litter', 'structure', 'structure Litter : Type'),
  ];

  it('brings in what the best-matching definition is built from', async () => {
    const lexical = LexicalIndex.build('lib', LIB, { usagePrior: 0 });
    const plain = (await lexical.searchPremises('the cloud of a set', 3)).map((h) => h.decl.name);
    expect(plain).not.toContain('Params');
    const fused = new FusionIndex(lexical, { ...none, definitions: 1 });
    expect((await fused.searchPremises('the cloud of a set', 3)).map((h) => h.decl.name)).toEqual(['Cloud', 'Params', 'Tangle']);
    expect(fused.kind).toBe('lexical + definitions γ=1');
    // An excluded name is never returned, whoever votes for it.
    expect((await fused.searchPremises('the cloud of a set', 3, { exclude: ['Params'] })).map((h) => h.decl.name)).toEqual([
      'Cloud',
      'Tangle',
    ]);
  });

  it('refuses the usage prior without the usage table', () => {
    expect(() => new FusionIndex(LexicalIndex.build('lib', LIB), { ...none, usagePrior: 1 })).toThrow(/usage table/);
  });
});

// Leakage: what the ranking learns from the library's theorems (analogy votes, usage prior) must
// not see the theorems the policy hides. Two versions of one library differ only in what some
// theorems use (their text is the same, so every lexical statistic is too): the hidden theorems
// of the second use a decoy premise. Whatever is hidden must leave the ranking unchanged, names
// and scores; a theorem that is not hidden must change it (so the comparison can fail).
describe('the fused ranking honours the leave-out policy', () => {
  const FIXTURE = resolve(__dirname, '../fixtures/corpus/leave-out.jsonl');
  const ITEM = 'Lib.cloud_mono';
  const SIBLINGS = ['Lib.mem_cloud', 'Lib.cloud_empty'];
  const QUERY = 'The mem cloud is monotone; the cloud of the empty set is empty.';
  const DECOY = { name: 'Lib.Decoy', kind: 'def', signature: 'def Lib.Decoy : Prop', module: 'Lib.Decoy', uses: [] };
  let work: string;
  let lines: Declaration[];
  const registries: IndexRegistry[] = [];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'driftline-fusion-leak-'));
    lines = (await readFile(FIXTURE, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Declaration);
  });
  afterAll(async () => {
    for (const r of registries) await r.close();
    await rm(work, { recursive: true, force: true });
  });

  /** The library with the named theorems using only the decoy. */
  async function variant(tag: string, decoyed: readonly string[]): Promise<string> {
    const path = join(work, `${tag}.jsonl`);
    const decls = [...lines.map((l) => (decoyed.includes(l.name) ? { ...l, uses: [DECOY.name] } : l)), DECOY];
    await writeFile(path, decls.map((x) => JSON.stringify(x)).join('\n') + '\n');
    return path;
  }

  // The default (no prior in monolithic retrieval) and the same with the usage prior on.
  const SETTINGS: Record<string, RerankSettings> = {
    default: DEFAULT_RERANK,
    'with usage prior': { ...DEFAULT_RERANK, monolithic: { ...DEFAULT_RERANK.monolithic, usagePrior: 1.2 } },
  };

  async function ranking(corpusPath: string, tag: string, settings: RerankSettings, leaveOut: LeaveOutPolicy) {
    const registry = new IndexRegistry({ libraries: [{ name: 'lib', corpusPath }], dir: join(work, tag), wrap: rerankWrap(settings) });
    registries.push(registry);
    const out = await retrievePremises(await registry.get('lib'), {
      library: 'lib',
      statement: QUERY,
      subqueries: [],
      mode: 'monolithic',
      topK: 10,
      exclude: [ITEM],
      leaveOut,
      gold: [],
    });
    return out.premises.map((p) => [p.name, p.score]);
  }

  for (const [label, settings] of Object.entries(SETTINGS)) {
    it(`file: the item's file's theorems change nothing, another file's do (store path, ${label})`, async () => {
      const base = await ranking(await variant('base', []), `base-${label}`, settings, 'file');
      const hiddenChanged = await ranking(await variant('hidden', [ITEM, ...SIBLINGS]), `hidden-${label}`, settings, 'file');
      expect(hiddenChanged).toEqual(base);
      const otherChanged = await ranking(await variant('other', ['Lib.tangle_cloud_near']), `other-${label}`, settings, 'file');
      expect(otherChanged).not.toEqual(base);
    });

    it(`item: the item itself changes nothing, its siblings do (store path, ${label})`, async () => {
      const base = await ranking(await variant('base', []), `ibase-${label}`, settings, 'item');
      expect(await ranking(await variant('item', [ITEM]), `iitem-${label}`, settings, 'item')).toEqual(base);
      expect(await ranking(await variant('siblings', SIBLINGS), `isib-${label}`, settings, 'item')).not.toEqual(base);
    });
  }

  it('holds in memory too (the reference `driftline eval retrieval --in-memory` searches)', async () => {
    const search = async (decoyed: readonly string[], leaveOut: LeaveOutPolicy) => {
      const decls = [...lines.map((l) => (decoyed.includes(l.name) ? { ...l, uses: [DECOY.name] } : l)), DECOY];
      const settings = SETTINGS['with usage prior']!;
      const index = rerank(LexicalIndex.build('lib', decls, { usagePrior: 0 }), new UsageTable(decls, isTheorem), 'monolithic', settings);
      const out = await retrievePremises(index, {
        library: 'lib',
        statement: QUERY,
        subqueries: [],
        mode: 'monolithic',
        topK: 10,
        exclude: [ITEM],
        leaveOut,
        gold: [],
      });
      return out.premises.map((p) => [p.name, p.score]);
    };
    const base = await search([], 'file');
    expect(await search([ITEM, ...SIBLINGS], 'file')).toEqual(base);
    expect(await search(['Lib.tangle_cloud_near'], 'file')).not.toEqual(base);
    expect(await search([ITEM], 'item')).toEqual(await search([], 'item'));
    expect(await search(SIBLINGS, 'item')).not.toEqual(await search([], 'item'));
  });
});
