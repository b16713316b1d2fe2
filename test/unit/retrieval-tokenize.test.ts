import { describe, expect, it } from 'vitest';
import { splitWords, stem, tokenize, tokenizeName } from '../../engines/retrieval/lean-tokenize';

describe('tokenizeName', () => {
  it('keeps the whole dotted name, its dotted suffixes and its namespaces', () => {
    expect(tokenizeName('Nat.Prime')).toEqual(['nat.prime', 'nat', 'prime']);
    expect(tokenizeName('Nat.Prime.two_le')).toEqual(['nat.prime.two_le', 'prime.two_le', 'two_le', 'nat', 'prime', 'two', 'le']);
  });

  it('splits camelCase and PascalCase, keeping the compound whole', () => {
    expect(tokenizeName('IsPrimitiveRoot')).toEqual(['isprimitiveroot', 'is', 'primitive', 'root']);
    expect(tokenizeName('orderOf')).toEqual(['orderof', 'order', 'of']);
  });

  it('splits acronyms, snake_case and digits', () => {
    expect(splitWords('ConNF')).toEqual(['Con', 'NF']);
    expect(splitWords('HTMLParser')).toEqual(['HTML', 'Parser']);
    expect(splitWords('card_sub_one')).toEqual(['card', 'sub', 'one']);
    expect(splitWords('Fin2')).toEqual(['Fin', '2']);
    expect(tokenizeName('ZMod')).toEqual(['zmod', 'mod']);
  });

  it('drops single-letter variables', () => {
    expect(tokenizeName('x')).toEqual([]);
    expect(tokenizeName('x₁')).toEqual([]);
  });
});

describe('tokenize', () => {
  it('lowercases prose, drops English stopwords and strips plurals', () => {
    expect(tokenize('Show that the primes are infinite')).toEqual(['prime', 'infinite']);
  });

  it('keeps stopword-like words inside names but not in prose', () => {
    expect(tokenize('a is IsUnit')).toEqual(['isunit', 'is', 'unit']);
  });

  it('reads notation as the word it stands for and drops other symbols', () => {
    expect(tokenize('f : ℕ → ℤ')).toEqual(['nat', 'int']);
    expect(tokenize('a ∣ b ∧ x⁻¹ ∈ S')).toEqual(['dvd', 'inv', 'mem']);
  });

  it('finds Lean names inside prose and signatures, without a sentence-ending dot', () => {
    expect(tokenize('by `Nat.Prime p`.')).toEqual(['nat.prime', 'nat', 'prime']);
    expect(tokenize('theorem foo [Fact (Nat.Prime p)] : orderOf a ∣ p - 1')).toEqual([
      'foo',
      'fact',
      'nat.prime',
      'nat',
      'prime',
      'orderof',
      'order',
      'of',
      'dvd',
      '1',
    ]);
  });

  it('keeps numbers', () => {
    expect(tokenize('of the form 4t+3')).toEqual(['form', '4', '3']);
  });
});

describe('stem', () => {
  it('strips plurals conservatively', () => {
    expect(stem('primes')).toBe('prime');
    expect(stem('properties')).toBe('property');
    expect(stem('classes')).toBe('class');
    expect(stem('modulus')).toBe('modulus');
    expect(stem('basis')).toBe('basis');
    expect(stem('has')).toBe('has');
  });
});
