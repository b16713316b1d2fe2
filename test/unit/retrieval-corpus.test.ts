import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorpusLineError, isTheorem, loadCorpus, parseCorpusLine } from '../../engines/retrieval/corpus';

const FIXTURES = resolve(__dirname, '../fixtures/corpus');
import { benchmarkRecords, publicData } from '../helpers/public-data';

describe('isTheorem', () => {
  it('counts theorems and lemmas, whatever their modifiers', () => {
    expect(isTheorem({ kind: 'theorem' })).toBe(true);
    expect(isTheorem({ kind: 'lemma' })).toBe(true);
    expect(isTheorem({ kind: 'protected theorem' })).toBe(true);
    expect(isTheorem({ kind: 'def' })).toBe(false);
    expect(isTheorem({ kind: 'noncomputable def' })).toBe(false);
    expect(isTheorem({ kind: 'structure_field' })).toBe(false);
  });
});

describe('loadCorpus, our format', () => {
  it('reads every declaration with its fields', async () => {
    const { declarations, warnings } = await loadCorpus(join(FIXTURES, 'mini.jsonl'));
    expect(warnings).toEqual([]);
    expect(declarations).toHaveLength(21);
    const prime = declarations.find((d) => d.name === 'Nat.Prime')!;
    expect(prime).toMatchObject({
      kind: 'def',
      signature: 'def Nat.Prime (p : ℕ) : Prop',
      module: 'Mathlib.Data.Nat.Prime.Defs',
      uses: [],
    });
    expect(prime.source).toContain('Irreducible');
    const fermat = declarations.find((d) => d.name === 'ZMod.pow_card_sub_one_eq_one')!;
    expect(fermat.uses).toEqual(['Fact', 'Nat.Prime', 'ZMod']);
    expect(declarations.filter(isTheorem)).toHaveLength(9);
  });

  it('names the file and line of a bad line', async () => {
    const path = join(FIXTURES, 'bad.jsonl');
    const err = await loadCorpus(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorpusLineError);
    expect((err as CorpusLineError).line).toBe(3);
    expect((err as Error).message).toContain(`${path}:3:`);
    expect((err as Error).message).toContain('not JSON');
  });

  it('with skipBadLines, skips bad lines and reports each as a warning', async () => {
    const path = join(FIXTURES, 'bad.jsonl');
    const { declarations, warnings } = await loadCorpus(path, { skipBadLines: true });
    expect(declarations.map((d) => d.name)).toEqual(['Nat', 'Nat.Prime', 'ZMod']);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`${path}:3:`);
    expect(warnings[1]).toContain(`${path}:4:`);
    expect(warnings[1]).toContain('signature');
  });

  it('rejects a line in neither format', () => {
    expect(() => parseCorpusLine('{"title": "x"}')).toThrow(/unknown format/);
    expect(() => parseCorpusLine('[1, 2]')).toThrow(/JSON object/);
  });

  it('fails with the path when the file does not exist', async () => {
    await expect(loadCorpus(join(FIXTURES, 'missing.jsonl'))).rejects.toThrow(/missing\.jsonl/);
  });
});

describe('loadCorpus, RAutoformalizer format', () => {
  it('strips premise markers and resolves used_premises line numbers to names', async () => {
    const { declarations, warnings } = await loadCorpus(join(FIXTURES, 'rauto-mini.jsonl'));
    expect(warnings).toEqual([]);
    const [pos, size, thing, extra] = declarations;
    expect(pos).toEqual({
      name: 'Demo.thing_pos',
      kind: 'theorem',
      signature: 'theorem Demo.thing_pos (n : Demo.Size ) : 0 < Demo.thing n',
      module: 'Demo.Basic',
      source: 'theorem thing_pos (n : Size) : 0 < thing n := by\n  simp [thing]\n',
      informal: 'Every thing is positive.',
      // lines 1, 2, 2 (0-based, forward references, a repeat) → two names
      uses: ['Demo.Size', 'Demo.thing'],
    });
    expect(size?.docstring).toBe('A size.');
    expect(thing?.docstring).toBeUndefined(); // empty additional_info is no docstring
    expect(thing?.signature).not.toContain('PREMISE');
    // Our own format may share the file: the format is detected per line.
    expect(extra).toMatchObject({ name: 'Demo.extra', kind: 'def', uses: ['Demo.thing'] });
  });

  it('warns about a used_premises line that holds no declaration', async () => {
    const line = JSON.stringify({ full_name: 'A', ptype: 'theorem', header: 'theorem A : True', used_premises: [7] });
    const dir = await mkdtemp(join(tmpdir(), 'driftline-corpus-'));
    const path = join(dir, 'dangling.jsonl');
    await writeFile(path, `${line}\n`);
    const { declarations, warnings } = await loadCorpus(path);
    expect(declarations[0]?.uses).toEqual([]);
    expect(warnings[0]).toMatch(/dangling\.jsonl:1: used_premises refers to line 7/);
  });

  it('imports the ConNF library (1,348 declarations, 961 theorems)', async () => {
    const DATA_DIR = publicData();
    const CONNF_LIBRARY = join(DATA_DIR, 'connf/library.jsonl');
    const { declarations, warnings } = await loadCorpus(CONNF_LIBRARY);
    expect(warnings).toEqual([]);
    expect(declarations).toHaveLength(1348);
    expect(declarations.filter(isTheorem)).toHaveLength(961);
    expect(declarations.some((d) => d.signature.includes('PREMISE'))).toBe(false);

    const memCloud = declarations.find((d) => d.name === 'ConNF.mem_cloud')!;
    expect(memCloud.module).toBe('ConNF.NewTangle.Cloud');
    expect(memCloud.signature).toContain('t ∈ ConNF.cloud hγβ s');
    // The gold dependencies of the benchmark item for this theorem are among its uses.
    const item = (benchmarkRecords('connf', 'dev') as { full_name: string; mathlib_dependencies: string[] }[]).find(
      (i) => i.full_name === 'ConNF.mem_cloud',
    )!;
    expect(memCloud.uses).toEqual(expect.arrayContaining(item.mathlib_dependencies));
    expect(new Set(memCloud.uses).size).toBe(memCloud.uses.length);
  });
});
