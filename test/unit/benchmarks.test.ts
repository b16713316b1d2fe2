// Benchmark loaders: the three formats, a generic field map, bad records named by file and
// line, and deterministic selection.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadBenchmark, loadBenchmarks } from '../../engines/benchmarks/load';
import { minif2fDomain, stripDocComment } from '../../engines/benchmarks/formats';
import { selectItems } from '../../engines/benchmarks/select';
import { publicData } from '../helpers/public-data';
import { resolveNamedBenchmark } from '../../engines/benchmarks/named';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/benchmarks/${name}`, import.meta.url));

describe('benchmark loaders', () => {
  it('reads the RAutoformalizer format (ConNF, ProofNet), with the split from the file name', async () => {
    const items = await loadBenchmark({ path: fixture('mini.dev.jsonl'), format: 'rautoformalizer' });
    expect(items).toHaveLength(8);
    expect(items[0]).toEqual({
      id: 'Demo.prime_ge_two',
      informal: 'If p is a prime number then p is at least 2.',
      goldStatement: 'theorem thm_P (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry',
      goldPremises: ['Nat.Prime'],
      header: 'import Mathlib\n',
      tags: { split: 'dev', source: 'Demo' },
    });
  });

  it('reads the DeepSeek format (miniF2F): doc comment stripped, split and competition as tags', async () => {
    const items = await loadBenchmark({ path: fixture('minif2f-mini.jsonl'), format: 'deepseek' });
    expect(items.map((i) => i.id)).toEqual(['mathd_algebra_1', 'amc12a_2019_p21', 'imo_1959_p1']);
    expect(items[0]).toMatchObject({
      informal: 'Show that $2 + 2 = 4$.',
      goldPremises: [],
      tags: { split: 'valid', domain: 'mathd_algebra' },
    });
    expect(items[1]!.tags).toEqual({ split: 'test', domain: 'amc12a' });
    expect(items[2]!.goldStatement).toBe('theorem imo_1959_p1 (n : ℕ) (h₀ : 0 < n) : Nat.gcd (21 * n + 4) (14 * n + 3) = 1 := by');
    expect(stripDocComment('/-- Hello.-/\n')).toBe('Hello.');
    expect(minif2fDomain('imo_1959_p1')).toBe('imo');
  });

  it('reads any JSONL through a field map, with dotted paths and tags', async () => {
    const items = await loadBenchmark({
      path: fixture('custom.jsonl'),
      format: 'jsonl',
      fields: { id: 'meta.key', informal: 'problem', goldStatement: 'lean', goldPremises: 'deps', tags: { domain: 'meta.area' } },
      tags: { source: 'mine' },
    });
    expect(items).toEqual([
      {
        id: 'c1',
        informal: 'Every prime is at least two.',
        goldStatement: 'theorem c1 (p : ℕ) (hp : Nat.Prime p) : 2 ≤ p := by sorry',
        goldPremises: ['Nat.Prime'],
        tags: { source: 'mine', domain: 'nt' },
      },
      { id: '2', informal: 'Twice a number is even.', goldPremises: ['Even'], tags: { source: 'mine', domain: 'alg' } },
    ]);
  });

  it('stops at a bad record, naming the file, the line and the field', async () => {
    const path = fixture('bad-line.jsonl');
    await expect(loadBenchmark({ path, format: 'rautoformalizer' })).rejects.toThrow(`${path}:3: informal_stmt:`);
    await expect(loadBenchmark({ path, format: 'rautoformalizer' })).rejects.toThrow(/mathlib_dependencies/);
    await expect(loadBenchmark({ path: fixture('mini.dev.jsonl'), format: 'deepseek' })).rejects.toThrow(
      /mini\.dev\.jsonl:1: name: .*\(format deepseek\)/,
    );
    await expect(
      loadBenchmark({ path: fixture('custom.jsonl'), format: 'jsonl', fields: { id: 'meta.key', informal: 'nothere' } }),
    ).rejects.toThrow(/custom\.jsonl:1: nothere: missing/);
    await expect(loadBenchmark({ path: fixture('missing.jsonl'), format: 'jsonl' })).rejects.toThrow(
      /cannot read benchmark .*missing\.jsonl: no such file/,
    );
  });

  it('refuses an id that repeats, within a file or across files', async () => {
    const path = fixture('mini.dev.jsonl');
    await expect(
      loadBenchmarks([
        { path, format: 'rautoformalizer' },
        { path, format: 'rautoformalizer', limit: 1 },
      ]),
    ).rejects.toThrow(/"Demo.prime_ge_two" is in both/);
  });

  it('selects deterministically: offset and limit, a seeded sample, explicit ids', async () => {
    const path = fixture('mini.dev.jsonl');
    const all = await loadBenchmark({ path, format: 'rautoformalizer' });
    const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
    expect(ids(await loadBenchmark({ path, format: 'rautoformalizer', offset: 2, limit: 3 }))).toEqual(ids(all.slice(2, 5)));
    const a = await loadBenchmark({ path, format: 'rautoformalizer', seed: 7, limit: 4 });
    const b = await loadBenchmark({ path, format: 'rautoformalizer', seed: 7, limit: 4 });
    const c = await loadBenchmark({ path, format: 'rautoformalizer', seed: 8, limit: 4 });
    expect(ids(a)).toEqual(ids(b));
    expect(a).toHaveLength(4);
    expect(ids(a)).not.toEqual(ids(c));
    // A sample keeps file order.
    expect(ids(a)).toEqual(ids(all).filter((id) => ids(a).includes(id)));
    expect(ids(await loadBenchmark({ path, format: 'rautoformalizer', ids: ['Demo.even_sum', 'Demo.prime_pos'] }))).toEqual([
      'Demo.even_sum',
      'Demo.prime_pos',
    ]);
    await expect(loadBenchmark({ path, format: 'rautoformalizer', ids: ['Demo.nope'] })).rejects.toThrow(/no item Demo.nope/);
    expect(selectItems(all, { limit: 100 })).toHaveLength(8);
  });

  it('loads the real ConNF dev split, miniF2F and ProofNet', async () => {
    const root = publicData();
    // By name: from the full file of the source, or from a mirror's dev file, whichever setup pulled.
    const connf = await loadBenchmark(resolveNamedBenchmark('connf', 'dev', root));
    expect(connf).toHaveLength(577);
    expect(connf.filter((i) => i.goldPremises.includes('ConNF.Params'))).toHaveLength(450);
    expect(connf[0]!.tags).toMatchObject({ split: 'dev', source: 'Con-NF' });
    const minif2f = await loadBenchmark({ path: `${root}/minif2f/minif2f.jsonl`, format: 'deepseek' });
    expect(minif2f).toHaveLength(488);
    expect(new Set(minif2f.map((i) => i.tags.split))).toEqual(new Set(['valid', 'test']));
    const proofnet = await loadBenchmark({ path: `${root}/proofnet/benchmark.jsonl`, format: 'rautoformalizer' });
    expect(proofnet).toHaveLength(374);
  });
});
