// The leave-out policy on a small library of our own: two theorems of Lib.Cloud share their
// premises with the item Lib.cloud_mono; one theorem of another file (Lib.Tangle) uses the same.
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCorpus, type Declaration } from '../../engines/retrieval/corpus';
import { LexicalIndex } from '../../engines/retrieval/eval/lexical-index';
import { leaveOutNames } from '../../engines/retrieval/leave-out';
import { retrievePremises } from '../../engines/retrieval/retrieve-premises';
import { illustrate } from '../../engines/retrieval/illustrate';
import { AnalogyIndex } from '../../engines/retrieval/analogy';
import { PremiseReranker } from '../../engines/retrieval/premise-reranker';
import type { Hit, PremiseIndex, SearchOptions } from '../../engines/retrieval/premise-index';
import { hiddenTheorems, mostUsedPremises, usageBaseline } from '../../engines/retrieval/eval/usage-baseline';
import { evaluateRetrieval } from '../../engines/retrieval/eval/run-eval';

const CORPUS = resolve(__dirname, '../fixtures/corpus/leave-out.jsonl');
const ITEM = 'Lib.cloud_mono';
const SIBLINGS = ['Lib.mem_cloud', 'Lib.cloud_empty'];

let decls: Declaration[];
let index: LexicalIndex;

beforeAll(async () => {
  decls = (await loadCorpus(CORPUS)).declarations;
  index = LexicalIndex.build('lib', decls);
});

/** Records the exclusions each search is given. */
class Recorder extends PremiseReranker {
  readonly kind = 'lexical';
  readonly seen: { call: string; exclude: readonly string[] }[] = [];
  async searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    this.seen.push({ call: 'searchPremises', exclude: opts?.exclude ?? [] });
    return this.inner.searchPremises(query, k, opts);
  }
  override theoremsUsing(names: readonly string[], opts?: SearchOptions) {
    this.seen.push({ call: 'theoremsUsing', exclude: opts?.exclude ?? [] });
    return this.inner.theoremsUsing(names, opts);
  }
}

describe('leave-out policy', () => {
  it("finds the theorems of an item's own file, not its definitions", async () => {
    expect(await index.sameFileTheorems([ITEM])).toEqual(['Lib.mem_cloud', 'Lib.cloud_mono', 'Lib.cloud_empty']);
    // A definition's file is a file too; a name the library lacks has none.
    expect(await index.sameFileTheorems(['Lib.Params'])).toEqual(['Lib.params_pos']);
    expect(await index.sameFileTheorems(['No.such'])).toEqual([]);
  });

  it('item hides the names given; file adds the theorems of their files', async () => {
    expect(await leaveOutNames(index, [ITEM], 'item')).toEqual([ITEM]);
    expect(await leaveOutNames(index, [ITEM])).toEqual([ITEM]);
    expect(await leaveOutNames(index, [ITEM], 'file')).toEqual([ITEM, ...SIBLINGS]);
    expect(await leaveOutNames(index, [], 'file')).toEqual([]);
    await expect(leaveOutNames(index, [ITEM], 'module' as 'file')).rejects.toThrow(/unknown leave-out policy "module"/);
  });

  it('retrieval searches with the widened exclusions, and says so in its notes', async () => {
    const rec = new Recorder(index);
    const out = await retrievePremises(rec, {
      library: 'lib',
      statement: 'cloud of a set',
      subqueries: [],
      mode: 'monolithic',
      topK: 3,
      exclude: [ITEM],
      leaveOut: 'file',
      gold: [],
    });
    expect(rec.seen).toEqual([{ call: 'searchPremises', exclude: [ITEM, ...SIBLINGS] }]);
    expect(out.notes).toContain("leave-out: file (2 theorems of the item's own file hidden)");
    // Definitions of the item's own file stay retrievable.
    expect(out.premises.map((p) => p.name)).toContain('Lib.cloud');
    const rec2 = new Recorder(index);
    await retrievePremises(rec2, {
      library: 'lib',
      statement: 'cloud',
      subqueries: [{ phrase: 'cloud', formal: 'Lib.cloud s' }],
      mode: 'drift',
      topK: 1,
      exclude: [ITEM],
      gold: [],
    });
    expect(rec2.seen).toEqual([{ call: 'searchPremises', exclude: [ITEM] }]);
  });

  it('no theorem of the file votes in the analogy re-ranking', async () => {
    // The query names no definition; only the similar theorems' votes can bring Lib.near in.
    // Under `item` the item's neighbours in Lib.Cloud (which use Lib.near) vote for it; under
    // `file` only Lib.tangle_cloud_near of another file does, with its whole premise set.
    const analogy = new AnalogyIndex(LexicalIndex.build('lib', decls, { usagePrior: 0 }), { neighbours: 2 });
    const statement = 'mem cloud mono empty';
    const run = async (leaveOut: 'item' | 'file') =>
      retrievePremises(analogy, {
        library: 'lib',
        statement,
        subqueries: [],
        mode: 'monolithic',
        topK: 5,
        exclude: [ITEM],
        leaveOut,
        gold: [],
      });
    const voters = async (leaveOut: 'item' | 'file') =>
      (await analogy.searchTheorems(statement, 2, { exclude: await leaveOutNames(index, [ITEM], leaveOut) })).map((h) => h.decl.name);
    expect(await voters('item')).toEqual(expect.arrayContaining(SIBLINGS));
    expect(await voters('file')).not.toEqual(expect.arrayContaining([SIBLINGS[0]]));
    for (const t of await voters('file')) expect(SIBLINGS).not.toContain(t);
    const item = (await run('item')).premises.map((p) => p.name);
    const file = (await run('file')).premises.map((p) => p.name);
    expect(item).toContain('Lib.near');
    // Lib.Tangle is voted for only by the other file's theorem, so only `file` ranks it above
    // what the siblings vote for.
    expect(file.indexOf('Lib.Tangle')).toBeGreaterThanOrEqual(0);
    expect(item.indexOf('Lib.Tangle') === -1 || item.indexOf('Lib.Tangle') > file.indexOf('Lib.Tangle')).toBe(true);
  });

  it('the usage prior does not count uses by theorems of the file', async () => {
    // Lib.near is used by two theorems of Lib.Cloud besides the item and by one elsewhere,
    // Lib.Tangle by one elsewhere. Counting the siblings lifts the weakly matching Lib.near above
    // Lib.Tangle; without them the two have one use each and the words decide.
    const ranking = async (alpha: number, leaveOut: 'item' | 'file') => {
      const prior = LexicalIndex.build('lib', decls, { usagePrior: alpha });
      const hits = await prior.searchPremises('tangle cloud', 3, { exclude: await leaveOutNames(prior, [ITEM], leaveOut) });
      return hits.map((h) => h.decl.name);
    };
    expect(await ranking(1.2, 'item')).toEqual(['Lib.cloud', 'Lib.near', 'Lib.Tangle']);
    expect(await ranking(1.2, 'file')).toEqual(['Lib.cloud', 'Lib.Tangle', 'Lib.near']);
    // Without the prior the policy changes nothing here (no theorem is a premise).
    expect(await ranking(0, 'file')).toEqual(await ranking(0, 'item'));
  });

  it('no theorem of the file is shown as an example', async () => {
    // Candidates using Lib.cloud, ranked by similarity: Lib.mem_cloud matches the words best.
    const input = { library: 'lib', statement: 'membership in a cloud mem_cloud', premises: ['Lib.cloud'], m: 1, exclude: [ITEM] };
    expect((await illustrate(index, input)).map((e) => e.name)).toEqual(['Lib.mem_cloud']);
    expect((await illustrate(index, { ...input, leaveOut: 'file' })).map((e) => e.name)).toEqual(['Lib.tangle_cloud_near']);
    const rec = new Recorder(index);
    await illustrate(rec, { ...input, leaveOut: 'file' });
    expect(rec.seen).toEqual([{ call: 'theoremsUsing', exclude: [ITEM, ...SIBLINGS] }]);
  });

  it('the evaluation applies the policy, and the query-blind baseline follows it', async () => {
    const items = [{ name: ITEM, statement: 'The cloud is monotone.', gold: ['Lib.Params', 'Lib.cloud'] }];
    expect(hiddenTheorems(decls, ITEM, 'file')).toEqual([ITEM, ...SIBLINGS]);
    // Most used overall: Lib.Params (6 theorems), Lib.cloud (4), Lib.near (3).
    expect(mostUsedPremises(decls, new Set(), 3)).toEqual(['Lib.Params', 'Lib.cloud', 'Lib.near']);
    // Hiding the file: Lib.cloud and Lib.near have one use left each (corpus order decides).
    expect(mostUsedPremises(decls, new Set(hiddenTheorems(decls, ITEM, 'file')), 3)).toEqual(['Lib.Params', 'Lib.cloud', 'Lib.near']);
    const [at1, at2] = usageBaseline(decls, items, [1, 2], 'file');
    expect(at1).toMatchObject({ k: 1, precision: 100, recall: 50 });
    expect(at2).toMatchObject({ k: 2, precision: 100, recall: 100 });
    const rec = new Recorder(index);
    await evaluateRetrieval(rec, items, { mode: 'monolithic', ks: [1], leaveOut: 'file' });
    expect(rec.seen[0]!.exclude).toEqual([ITEM, ...SIBLINGS]);
    const rec2 = new Recorder(index);
    await evaluateRetrieval(rec2, items, {
      mode: 'drift',
      ks: [1],
      leaveOut: 'file',
      subqueries: new Map([[ITEM, [{ phrase: 'cloud', formal: 'Lib.cloud' }]]]),
    });
    expect(rec2.seen[0]!.exclude).toEqual([ITEM, ...SIBLINGS]);
  });
});

export type { PremiseIndex };
