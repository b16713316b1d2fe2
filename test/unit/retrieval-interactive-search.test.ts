// Interactive search ranks what a person typed first: exact and near name matches, then the
// statement's words; the formalization's retrieval keeps its usage prior. On the real ConNF
// library, through the catalog the API route and MCP's search_premises call.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameMatch, NAME_MATCH, rankForPerson, searchWords } from '../../engines/retrieval/interactive-search';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { EmbeddedStore } from '../../engines/retrieval/stores/embedded';
import { rerankWrap } from '../../engines/retrieval/rerank';
import { registryCatalog } from '../../client/library-catalog';
import type { Hit } from '../../engines/retrieval/premise-index';
import { publicData } from '../helpers/public-data';

describe('name matches', () => {
  it('splits queries and names alike: hyphens, underscores, camel case, dots, plurals', () => {
    for (const text of ['near-litter', 'NearLitter', 'near_litter', 'near litters', 'nearLitter'])
      expect(searchWords(text), text).toEqual(['near', 'litter']);
    expect(searchWords('ConNF.IsNearLitter')).toEqual(['con', 'nf', 'is', 'near', 'litter']);
  });

  it('ranks the whole name, then the last component, then its words, then other components, then all words', () => {
    const tier = (q: string, name: string) => nameMatch(q, name).tier;
    expect(tier('connf.isnearlitter', 'ConNF.IsNearLitter')).toBe(NAME_MATCH.exact);
    expect(tier('is-near-litter', 'ConNF.IsNearLitter')).toBe(NAME_MATCH.last);
    expect(tier('IsNearLitter', 'ConNF.IsNearLitter')).toBe(NAME_MATCH.last);
    expect(tier('NearLitter.toProd', 'ConNF.NearLitter.toProd')).toBe(NAME_MATCH.last);
    expect(tier('near-litter', 'ConNF.IsNearLitter')).toBe(NAME_MATCH.inLast);
    expect(tier('nearlitter', 'ConNF.IsNearLitter')).toBe(NAME_MATCH.inLast);
    expect(tier('near-litter', 'ConNF.NearLitterAction.orbitSet')).toBe(NAME_MATCH.inOther);
    expect(tier('litter near', 'ConNF.IsNearLitter')).toBe(NAME_MATCH.allWords);
    expect(tier('near-litter', 'ConNF.Params')).toBe(NAME_MATCH.none);
    // Fewer words left over is closer.
    expect(nameMatch('near-litter', 'ConNF.IsNearLitter').extra).toBeLessThan(nameMatch('near-litter', 'ConNF.IsNearLitterMap').extra);
    expect(tier('', 'ConNF.Params')).toBe(NAME_MATCH.none);
  });

  it("orders by name match, the store's order breaking ties", () => {
    const hit = (name: string, score: number): Hit => ({ decl: { name, kind: 'def', signature: '', uses: [] }, score });
    const ranked = rankForPerson('near-litter', [
      hit('ConNF.Params', 9),
      hit('ConNF.NearLitterAction.orbitSet', 8),
      hit('ConNF.Litter', 7),
      hit('ConNF.Litter.toNearLitter', 6),
      hit('ConNF.IsNearLitter', 5),
    ]);
    expect(ranked.map((h) => h.decl.name)).toEqual([
      'ConNF.Litter.toNearLitter',
      'ConNF.IsNearLitter',
      'ConNF.NearLitterAction.orbitSet',
      'ConNF.Params',
      'ConNF.Litter',
    ]);
  });
});

describe('interactive search on ConNF', () => {
  let work: string;
  let registry: IndexRegistry;
  let version: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'driftline-isearch-'));
    // The service's registry: the embedded store, the default re-ranking for runs.
    registry = new IndexRegistry({
      libraries: [{ name: 'connf', corpusPath: join(publicData(), 'connf', 'library.jsonl') }],
      store: new EmbeddedStore(join(work, 'embedded')),
      wrap: rerankWrap(),
    });
    ({ version } = await registry.open('connf'));
  }, 120_000);

  afterAll(async () => {
    await registry?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('ranks ConNF.IsNearLitter above ConNF.Params for `near-litter`, where the run ranking puts Params first', async () => {
    const found = await registryCatalog(registry).search('connf', 'near-litter', 10);
    const names = found!.hits.map((h) => h.name);
    expect(found!.version).toBe(version);
    // The names built of exactly those words, plus one (IsNearLitter, toNearLitter), come first.
    expect(names.indexOf('ConNF.IsNearLitter')).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('ConNF.IsNearLitter')).toBeLessThan(3);
    if (names.includes('ConNF.Params')) expect(names.indexOf('ConNF.IsNearLitter')).toBeLessThan(names.indexOf('ConNF.Params'));
    // Every hit of the first page has near and litter in its name.
    for (const name of names.slice(0, 5)) expect(searchWords(name), name).toEqual(expect.arrayContaining(['near', 'litter']));

    // The formalization's retrieval keeps its ranking: the usage prior lifts ConNF.Params.
    const run = await (await registry.wrappedVersion(version, 'monolithic')).searchPremises('near-litter', 10);
    const runNames = run.map((h) => h.decl.name);
    expect(runNames.indexOf('ConNF.Params')).toBeGreaterThanOrEqual(0);
    expect(runNames.indexOf('ConNF.Params')).toBeLessThan(
      runNames.indexOf('ConNF.IsNearLitter') === -1 ? 10 : runNames.indexOf('ConNF.IsNearLitter'),
    );
  });

  it('finds a name typed exactly or by its last component first, whatever its case', async () => {
    const catalog = registryCatalog(registry);
    expect((await catalog.search('connf', 'ConNF.IsNearLitter', 5))!.hits[0]!.name).toBe('ConNF.IsNearLitter');
    expect((await catalog.search('connf', 'isnearlitter', 5))!.hits[0]!.name).toBe('ConNF.IsNearLitter');
    expect((await catalog.search('connf', 'Params', 5))!.hits[0]!.name).toBe('ConNF.Params');
    // A statement's words, no name typed: still answers, by the store's ranking.
    expect((await catalog.search('connf', 'a set of atoms close to a litter', 5))!.hits.length).toBe(5);
  });
});
