import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WordPieceTokenizer } from '../../engines/retrieval/embedders/wordpiece';
import { encodeSafetensors, parseSafetensors, type Tensor } from '../../engines/retrieval/embedders/safetensors';
import { erf } from '../../engines/retrieval/embedders/bert';
import { LocalEmbedder } from '../../engines/retrieval/embedders/local';
import { CachingEmbedder } from '../../engines/retrieval/embedders/cache';

const VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  'prime',
  'number',
  'is',
  '##pr',
  '##ime',
  'root',
  '##s',
  'a',
  ',',
  '.',
  'cafe',
  'group',
  'x',
  '##1',
];

describe('WordPiece tokenizer', () => {
  const tok = WordPieceTokenizer.fromVocabTxt(VOCAB.join('\n') + '\n');

  it('lower-cases, strips accents and splits punctuation like BERT', () => {
    expect(tok.preTokenize('Primes, Café.\tGROUP')).toEqual(['primes', ',', 'cafe', '.', 'group']);
    expect(tok.preTokenize('a+b (x)')).toEqual(['a', '+', 'b', '(', 'x', ')']);
  });

  it('takes the longest piece first and marks continuations', () => {
    expect(tok.wordPieces('primes')).toEqual(['prime', '##s']);
    expect(tok.wordPieces('ispr')).toEqual(['is', '##pr']);
    expect(tok.wordPieces('x1')).toEqual(['x', '##1']);
  });

  it('makes a word with an unmatched rest unknown as a whole', () => {
    expect(tok.wordPieces('primez')).toEqual(['[UNK]']);
  });

  it('wraps in [CLS] … [SEP] and cuts to the token limit', () => {
    expect(tok.encode('a prime').ids).toEqual([2, 11, 4, 3]);
    const cut = tok.encode('a prime number is a prime', 4);
    expect(cut.tokens).toEqual(['[CLS]', 'a', 'prime', '[SEP]']);
  });

  it('reads the vocabulary and normalizer from tokenizer.json', () => {
    const fromJson = WordPieceTokenizer.fromTokenizerJson({
      normalizer: { type: 'BertNormalizer', lowercase: false, strip_accents: null },
      model: { type: 'WordPiece', vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])), unk_token: '[UNK]' },
    });
    expect(fromJson.encode('Prime prime').tokens).toEqual(['[CLS]', '[UNK]', 'prime', '[SEP]']);
    expect(() => WordPieceTokenizer.fromTokenizerJson({ model: { type: 'BPE', vocab: {} } })).toThrow(/WordPiece/);
  });
});

describe('safetensors', () => {
  it('round-trips float32 tensors, including an unaligned data section', () => {
    const buf = encodeSafetensors({
      a: { shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) },
      b: { shape: [1], data: Float32Array.from([-0.5]) },
    });
    const back = parseSafetensors(buf);
    expect(Array.from(back.get('a')!.data)).toEqual([1, 2, 3, 4]);
    expect(back.get('b')!.shape).toEqual([1]);
    expect(() => parseSafetensors(Buffer.from([1, 2, 3]))).toThrow(/too short/);
  });
});

it('erf is accurate to float32 precision', () => {
  expect(erf(0)).toBeCloseTo(0, 7);
  expect(erf(0.5)).toBeCloseTo(0.5204998778, 6);
  expect(erf(-1.5)).toBeCloseTo(-0.9661051465, 6);
});

// ---- a tiny BERT with random weights, checked against a naive reference forward pass ----

const H = 8;
const HEADS = 2;
const INTER = 12;
const LAYERS = 2;
const MAXPOS = 16;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

function tinyModel(): Record<string, Tensor> {
  const r = rng(42);
  const t = (...shape: number[]): Tensor => ({ shape, data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => r()) });
  const ones = (n: number): Tensor => ({ shape: [n], data: Float32Array.from({ length: n }, () => 1 + 0.1 * r()) });
  const out: Record<string, Tensor> = {
    'embeddings.word_embeddings.weight': t(VOCAB.length, H),
    'embeddings.position_embeddings.weight': t(MAXPOS, H),
    'embeddings.token_type_embeddings.weight': t(2, H),
    'embeddings.LayerNorm.weight': ones(H),
    'embeddings.LayerNorm.bias': t(H),
  };
  for (let l = 0; l < LAYERS; l++) {
    const p = `encoder.layer.${l}`;
    for (const name of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']) {
      out[`${p}.${name}.weight`] = t(H, H);
      out[`${p}.${name}.bias`] = t(H);
    }
    out[`${p}.attention.output.LayerNorm.weight`] = ones(H);
    out[`${p}.attention.output.LayerNorm.bias`] = t(H);
    out[`${p}.intermediate.dense.weight`] = t(INTER, H);
    out[`${p}.intermediate.dense.bias`] = t(INTER);
    out[`${p}.output.dense.weight`] = t(H, INTER);
    out[`${p}.output.dense.bias`] = t(H);
    out[`${p}.output.LayerNorm.weight`] = ones(H);
    out[`${p}.output.LayerNorm.bias`] = t(H);
  }
  return out;
}

/** The textbook forward pass on nested arrays, in float64, written independently. */
function referenceEmbedding(weights: Record<string, Tensor>, ids: number[]): number[] {
  const W = (name: string) => weights[name]!;
  const row = (name: string, i: number, width: number) => Array.from(W(name).data.subarray(i * width, (i + 1) * width));
  const matmul = (x: number[][], name: string) => {
    const w = W(`${name}.weight`);
    const [out, inp] = w.shape as [number, number];
    const b = W(`${name}.bias`).data;
    return x.map((v) => Array.from({ length: out }, (_, o) => v.reduce((s, xi, i) => s + xi * w.data[o * inp + i]!, b[o]!)));
  };
  const ln = (x: number[][], name: string) =>
    x.map((v) => {
      const mean = v.reduce((a, b) => a + b, 0) / v.length;
      const variance = v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length;
      return v.map((xi, i) => ((xi - mean) / Math.sqrt(variance + 1e-12)) * W(`${name}.weight`).data[i]! + W(`${name}.bias`).data[i]!);
    });
  const add = (a: number[][], b: number[][]) => a.map((v, i) => v.map((x, j) => x + b[i]![j]!));
  let x = ids.map((id, pos) => {
    const w = row('embeddings.word_embeddings.weight', id, H);
    const p = row('embeddings.position_embeddings.weight', pos, H);
    const ty = row('embeddings.token_type_embeddings.weight', 0, H);
    return w.map((v, i) => v + p[i]! + ty[i]!);
  });
  x = ln(x, 'embeddings.LayerNorm');
  const d = H / HEADS;
  for (let l = 0; l < LAYERS; l++) {
    const p = `encoder.layer.${l}`;
    const q = matmul(x, `${p}.attention.self.query`);
    const k = matmul(x, `${p}.attention.self.key`);
    const v = matmul(x, `${p}.attention.self.value`);
    const ctx = x.map(() => new Array<number>(H).fill(0));
    for (let h = 0; h < HEADS; h++) {
      for (let i = 0; i < x.length; i++) {
        const s = k.map((kj) => q[i]!.slice(h * d, (h + 1) * d).reduce((acc, qi, c) => acc + qi * kj[h * d + c]!, 0) / Math.sqrt(d));
        const m = Math.max(...s);
        const e = s.map((z) => Math.exp(z - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j < x.length; j++) for (let c = 0; c < d; c++) ctx[i]![h * d + c]! += (e[j]! / z) * v[j]![h * d + c]!;
      }
    }
    const attn = ln(add(matmul(ctx, `${p}.attention.output.dense`), x), `${p}.attention.output.LayerNorm`);
    const inter = matmul(attn, `${p}.intermediate.dense`).map((r) => r.map((z) => 0.5 * z * (1 + erf(z / Math.SQRT2))));
    x = ln(add(matmul(inter, `${p}.output.dense`), attn), `${p}.output.LayerNorm`);
  }
  const mean = Array.from({ length: H }, (_, i) => x.reduce((s, r) => s + r[i]!, 0) / x.length);
  const norm = Math.sqrt(mean.reduce((s, z) => s + z * z, 0));
  return mean.map((z) => z / norm);
}

describe('LocalEmbedder on a tiny model directory', () => {
  let dir: string;
  const weights = tinyModel();
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-tiny-bert-'));
    writeFileSync(join(dir, 'vocab.txt'), VOCAB.join('\n') + '\n');
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        model_type: 'bert',
        vocab_size: VOCAB.length,
        hidden_size: H,
        num_hidden_layers: LAYERS,
        num_attention_heads: HEADS,
        intermediate_size: INTER,
        max_position_embeddings: MAXPOS,
        type_vocab_size: 2,
        layer_norm_eps: 1e-12,
        hidden_act: 'gelu',
      }),
    );
    writeFileSync(join(dir, 'model.safetensors'), encodeSafetensors(weights));
    mkdirSync(join(dir, '1_Pooling'));
    writeFileSync(join(dir, '1_Pooling', 'config.json'), JSON.stringify({ pooling_mode_mean_tokens: true }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('matches the reference forward pass, mean pooling and normalisation', async () => {
    const e = LocalEmbedder.fromDir(dir);
    expect(e.dimensions).toBe(H);
    expect(e.id).toMatch(/^local:driftline-tiny-bert-/);
    // 7 tokens: exercises the four-token blocks of the matrix product and the remainder.
    const text = 'a prime number is a prime root';
    const ids = e.tokenizer.encode(text).ids;
    expect(ids.length).toBe(9);
    const [got] = await e.embed([text]);
    const want = referenceEmbedding(weights, ids);
    Array.from(got!).forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 5));
    const [single] = await e.embed(['group']);
    referenceEmbedding(weights, e.tokenizer.encode('group').ids).forEach((v, i) => expect(single![i]).toBeCloseTo(v, 5));
  });

  it('puts the query prefix before queries only', async () => {
    const e = LocalEmbedder.fromDir(dir, { queryPrefix: 'group ' });
    const [q] = await e.embed(['prime'], { kind: 'query' });
    const [d] = await e.embed(['prime'], { kind: 'document' });
    const [both] = await e.embed(['group prime']);
    expect(Array.from(q!)).toEqual(Array.from(both!));
    expect(Array.from(d!)).not.toEqual(Array.from(q!));
    expect(e.id).not.toBe(LocalEmbedder.fromDir(dir).id);
  });

  it('keys its identity, and so the vector cache, on the prefix text, not its length', async () => {
    // 'group ' and 'prime ' have the same length but give different query vectors.
    const a = LocalEmbedder.fromDir(dir, { queryPrefix: 'group ' });
    const b = LocalEmbedder.fromDir(dir, { queryPrefix: 'prime ' });
    expect(a.id).not.toBe(b.id);
    expect(LocalEmbedder.fromDir(dir, { documentPrefix: 'group ' }).id).not.toBe(
      LocalEmbedder.fromDir(dir, { documentPrefix: 'prime ' }).id,
    );
    expect(LocalEmbedder.fromDir(dir, { queryPrefix: 'group ' }).id).toBe(a.id); // stable across loads

    const cacheFile = join(dir, 'vectors.jsonl');
    const first = new CachingEmbedder(a, cacheFile);
    const [qa] = await first.embed(['number'], { kind: 'query' });
    const second = new CachingEmbedder(b, cacheFile);
    const [qb] = await second.embed(['number'], { kind: 'query' });
    const [direct] = await b.embed(['number'], { kind: 'query' });
    expect(Array.from(qb!)).toEqual(Array.from(direct!));
    expect(Array.from(qb!)).not.toEqual(Array.from(qa!));
  });

  it('truncates long texts to the position limit instead of failing', async () => {
    const [v] = await LocalEmbedder.fromDir(dir).embed([Array(40).fill('prime').join(' ')]);
    expect(v).toHaveLength(H);
  });

  it('says how to install a model when the directory is missing or incomplete', () => {
    expect(() => LocalEmbedder.fromDir(join(dir, 'nope'))).toThrow(/does not exist.*setup:model/);
    const empty = mkdtempSync(join(tmpdir(), 'driftline-empty-'));
    try {
      expect(() => LocalEmbedder.fromDir(empty)).toThrow(/no config\.json/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

// ---- the real model, when `npm run setup:model` has installed it ----

const REAL_DIR = resolve(process.env.DRIFTLINE_LOCAL_MODEL_DIR ?? '.tools/models/all-MiniLM-L6-v2');
const haveReal = existsSync(join(REAL_DIR, 'model.safetensors'));
if (!haveReal) {
  console.warn(`[retrieval-embed-local] skipping the real-model test: no model at ${REAL_DIR} (run \`npm run setup:model\`)`);
}

describe.skipIf(!haveReal)(`LocalEmbedder on the real all-MiniLM-L6-v2 (${REAL_DIR})`, () => {
  it('reproduces sentence-transformers on its model card example and ranks by meaning', async () => {
    const e = LocalEmbedder.fromDir(REAL_DIR);
    expect(e.dimensions).toBe(384);
    const [v, prime, primeInt, cont] = await e.embed([
      'This is an example sentence',
      'a prime number p',
      'a prime integer',
      'the function f is continuous',
    ]);
    // First values of sentence-transformers' own output for this sentence.
    const expected = [0.0676569, 0.0634959, 0.0487131, 0.0793049, 0.037448, 0.0026528, 0.039375, -0.0070984];
    expected.forEach((x, i) => expect(v![i]).toBeCloseTo(x, 4));
    const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    expect(cos(prime!, primeInt!)).toBeGreaterThan(cos(prime!, cont!) + 0.3);
  });
});
