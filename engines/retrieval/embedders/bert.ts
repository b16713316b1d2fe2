// A BERT encoder forward pass in plain TypeScript (float32, CPU), enough for small sentence
// embedding models such as all-MiniLM-L6-v2 (6 layers × 384) or bge-small (12 × 384): no native
// runtime to install, weights read from a safetensors file on disk. One sequence at a time, so
// no padding and no attention mask are needed; sentence vectors are pooled over all its tokens.

export interface BertConfig {
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  intermediateSize: number;
  maxPositions: number;
  typeVocabSize: number;
  layerNormEps: number;
  hiddenAct: 'gelu' | 'gelu_new' | 'relu';
}

/** `config.json` of a Hugging Face BERT model → our config. */
export function bertConfigFromJson(json: Record<string, unknown>): BertConfig {
  const num = (key: string, dflt?: number): number => {
    const v = json[key] ?? dflt;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`config.json: ${key} is missing or not a number`);
    return v;
  };
  const type = json.model_type;
  if (type !== undefined && type !== 'bert') throw new Error(`config.json: model_type ${String(type)} is not supported (only bert)`);
  const act = String(json.hidden_act ?? 'gelu');
  if (act !== 'gelu' && act !== 'gelu_new' && act !== 'relu') throw new Error(`config.json: hidden_act ${act} is not supported`);
  const positionType = json.position_embedding_type ?? 'absolute';
  if (positionType !== 'absolute') throw new Error(`config.json: position_embedding_type ${String(positionType)} is not supported`);
  return {
    vocabSize: num('vocab_size'),
    hiddenSize: num('hidden_size'),
    numLayers: num('num_hidden_layers'),
    numHeads: num('num_attention_heads'),
    intermediateSize: num('intermediate_size'),
    maxPositions: num('max_position_embeddings', 512),
    typeVocabSize: num('type_vocab_size', 2),
    layerNormEps: num('layer_norm_eps', 1e-12),
    hiddenAct: act,
  };
}

export interface Linear {
  /** [out][in], row-major (PyTorch's layout). */
  weight: Float32Array;
  bias: Float32Array;
  inDim: number;
  outDim: number;
}

export interface LayerNorm {
  weight: Float32Array;
  bias: Float32Array;
}

export interface BertLayer {
  query: Linear;
  key: Linear;
  value: Linear;
  attnOut: Linear;
  attnNorm: LayerNorm;
  intermediate: Linear;
  output: Linear;
  outNorm: LayerNorm;
}

export interface BertWeights {
  wordEmbeddings: Float32Array;
  positionEmbeddings: Float32Array;
  tokenTypeEmbeddings: Float32Array;
  embNorm: LayerNorm;
  layers: BertLayer[];
}

type TensorLookup = (name: string, shape: number[]) => Float32Array;

/** Picks the weights out of a name → tensor map; names may carry a `bert.` prefix. */
export function bertWeightsFrom(config: BertConfig, tensors: Map<string, { shape: number[]; data: Float32Array }>): BertWeights {
  const prefix = tensors.has('bert.embeddings.word_embeddings.weight') ? 'bert.' : '';
  const get: TensorLookup = (name, shape) => {
    const t = tensors.get(prefix + name);
    if (!t) throw new Error(`model weights: tensor ${prefix + name} is missing`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new Error(`model weights: tensor ${prefix + name} has shape [${t.shape}], expected [${shape}]`);
    }
    return t.data;
  };
  const H = config.hiddenSize;
  const I = config.intermediateSize;
  const linear = (name: string, outDim: number, inDim: number): Linear => ({
    weight: get(`${name}.weight`, [outDim, inDim]),
    bias: get(`${name}.bias`, [outDim]),
    inDim,
    outDim,
  });
  const norm = (name: string): LayerNorm => ({ weight: get(`${name}.weight`, [H]), bias: get(`${name}.bias`, [H]) });
  const layers: BertLayer[] = [];
  for (let l = 0; l < config.numLayers; l++) {
    const p = `encoder.layer.${l}`;
    layers.push({
      query: linear(`${p}.attention.self.query`, H, H),
      key: linear(`${p}.attention.self.key`, H, H),
      value: linear(`${p}.attention.self.value`, H, H),
      attnOut: linear(`${p}.attention.output.dense`, H, H),
      attnNorm: norm(`${p}.attention.output.LayerNorm`),
      intermediate: linear(`${p}.intermediate.dense`, I, H),
      output: linear(`${p}.output.dense`, H, I),
      outNorm: norm(`${p}.output.LayerNorm`),
    });
  }
  return {
    wordEmbeddings: get('embeddings.word_embeddings.weight', [config.vocabSize, H]),
    positionEmbeddings: get('embeddings.position_embeddings.weight', [config.maxPositions, H]),
    tokenTypeEmbeddings: get('embeddings.token_type_embeddings.weight', [config.typeVocabSize, H]),
    embNorm: norm('embeddings.LayerNorm'),
    layers,
  };
}

/** y[n][out] = x[n][in] · Wᵀ + b. Four tokens at a time, so each weight is read once per four
 * tokens: plain JS has no SIMD, and memory traffic is what this loop is bound by. */
export function linearForward(x: Float32Array, n: number, lin: Linear): Float32Array {
  const { weight: w, bias, inDim, outDim } = lin;
  const y = new Float32Array(n * outDim);
  let t = 0;
  for (; t + 3 < n; t += 4) {
    const x0 = t * inDim;
    const x1 = x0 + inDim;
    const x2 = x1 + inDim;
    const x3 = x2 + inDim;
    for (let o = 0; o < outDim; o++) {
      const wo = o * inDim;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let i = 0; i < inDim; i++) {
        const wv = w[wo + i]!;
        s0 += x[x0 + i]! * wv;
        s1 += x[x1 + i]! * wv;
        s2 += x[x2 + i]! * wv;
        s3 += x[x3 + i]! * wv;
      }
      const b = bias[o]!;
      y[t * outDim + o] = s0 + b;
      y[(t + 1) * outDim + o] = s1 + b;
      y[(t + 2) * outDim + o] = s2 + b;
      y[(t + 3) * outDim + o] = s3 + b;
    }
  }
  for (; t < n; t++) {
    const xo = t * inDim;
    for (let o = 0; o < outDim; o++) {
      const wo = o * inDim;
      let s = 0;
      for (let i = 0; i < inDim; i++) s += x[xo + i]! * w[wo + i]!;
      y[t * outDim + o] = s + bias[o]!;
    }
  }
  return y;
}

/** In place: x ← LayerNorm(x [+ residual]) row by row. */
export function layerNorm(x: Float32Array, n: number, dim: number, norm: LayerNorm, eps: number, residual?: Float32Array): void {
  for (let t = 0; t < n; t++) {
    const o = t * dim;
    if (residual) for (let i = 0; i < dim; i++) x[o + i]! += residual[o + i]!;
    let mean = 0;
    for (let i = 0; i < dim; i++) mean += x[o + i]!;
    mean /= dim;
    let variance = 0;
    for (let i = 0; i < dim; i++) {
      const d = x[o + i]! - mean;
      variance += d * d;
    }
    variance /= dim;
    const inv = 1 / Math.sqrt(variance + eps);
    for (let i = 0; i < dim; i++) x[o + i] = (x[o + i]! - mean) * inv * norm.weight[i]! + norm.bias[i]!;
  }
}

/** erf, Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution here). */
export function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  return sign * y;
}

function activate(x: Float32Array, act: BertConfig['hiddenAct']): void {
  for (let i = 0; i < x.length; i++) {
    const v = x[i]!;
    if (act === 'gelu') x[i] = 0.5 * v * (1 + erf(v / Math.SQRT2));
    else if (act === 'gelu_new') x[i] = 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));
    else x[i] = v > 0 ? v : 0;
  }
}

/** Last hidden states [n][hidden] of one token sequence (token type 0 throughout). */
export function bertForward(config: BertConfig, w: BertWeights, ids: readonly number[]): Float32Array {
  const n = ids.length;
  const H = config.hiddenSize;
  if (n > config.maxPositions) throw new Error(`sequence of ${n} tokens is longer than the model's ${config.maxPositions}`);
  const x = new Float32Array(n * H);
  for (let t = 0; t < n; t++) {
    const id = ids[t]!;
    if (id < 0 || id >= config.vocabSize) throw new Error(`token id ${id} is outside the vocabulary`);
    for (let i = 0; i < H; i++) {
      x[t * H + i] = w.wordEmbeddings[id * H + i]! + w.positionEmbeddings[t * H + i]! + w.tokenTypeEmbeddings[i]!;
    }
  }
  layerNorm(x, n, H, w.embNorm, config.layerNormEps);

  const heads = config.numHeads;
  const d = H / heads;
  const scale = 1 / Math.sqrt(d);
  const scores = new Float32Array(n);
  let h: Float32Array = x;
  for (const layer of w.layers) {
    const q = linearForward(h, n, layer.query);
    const k = linearForward(h, n, layer.key);
    const v = linearForward(h, n, layer.value);
    const ctx = new Float32Array(n * H);
    for (let head = 0; head < heads; head++) {
      const ho = head * d;
      for (let i = 0; i < n; i++) {
        let max = -Infinity;
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let c = 0; c < d; c++) s += q[i * H + ho + c]! * k[j * H + ho + c]!;
          s *= scale;
          scores[j] = s;
          if (s > max) max = s;
        }
        let sum = 0;
        for (let j = 0; j < n; j++) {
          const e = Math.exp(scores[j]! - max);
          scores[j] = e;
          sum += e;
        }
        const out = i * H + ho;
        for (let j = 0; j < n; j++) {
          const p = scores[j]! / sum;
          for (let c = 0; c < d; c++) ctx[out + c]! += p * v[j * H + ho + c]!;
        }
      }
    }
    const attn = linearForward(ctx, n, layer.attnOut);
    layerNorm(attn, n, H, layer.attnNorm, config.layerNormEps, h);
    const inter = linearForward(attn, n, layer.intermediate);
    activate(inter, config.hiddenAct);
    const out = linearForward(inter, n, layer.output);
    layerNorm(out, n, H, layer.outNorm, config.layerNormEps, attn);
    h = out;
  }
  return h;
}

export type Pooling = 'mean' | 'cls';

/** One sentence vector from hidden states, L2-normalised when asked. */
export function pool(hidden: Float32Array, n: number, dim: number, pooling: Pooling, normalize: boolean): Float32Array {
  const v = new Float32Array(dim);
  if (pooling === 'cls') v.set(hidden.subarray(0, dim));
  else {
    for (let t = 0; t < n; t++) for (let i = 0; i < dim; i++) v[i]! += hidden[t * dim + i]!;
    for (let i = 0; i < dim; i++) v[i]! /= Math.max(1, n);
  }
  if (normalize) {
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < dim; i++) v[i]! /= norm;
  }
  return v;
}
