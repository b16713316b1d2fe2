// An Embedder over a sentence-embedding model stored in a directory on disk, in the layout of
// sentence-transformers / Hugging Face (`config.json`, `tokenizer.json` or `vocab.txt`,
// `model.safetensors`, optionally `1_Pooling/config.json`, `modules.json`,
// `sentence_bert_config.json`). Never loads from a hub: a missing file is an error that says
// how to install the model (`npm run setup:model`). BERT-family models only (MiniLM, BGE, E5).
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { prefixIdSuffix, type EmbedKind, type Embedder } from '../embedder';
import { bertConfigFromJson, bertForward, bertWeightsFrom, pool, type BertConfig, type BertWeights, type Pooling } from './bert';
import { readSafetensors } from './safetensors';
import { WordPieceTokenizer } from './wordpiece';

export interface LocalEmbedderOptions {
  /** Prepended to queries (BGE: "Represent this sentence for searching relevant passages: "). */
  queryPrefix?: string;
  /** Prepended to documents (E5: "passage: "). */
  documentPrefix?: string;
  /** Token limit per text, [CLS] and [SEP] included; default: the model's `max_seq_length`. */
  maxTokens?: number;
  /** Identity override; default `local:<directory name>`. */
  name?: string;
}

function readJson(path: string): Record<string, unknown> | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`);
  }
}

export class LocalEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;

  constructor(
    private readonly config: BertConfig,
    private readonly weights: BertWeights,
    readonly tokenizer: WordPieceTokenizer,
    private readonly pooling: Pooling,
    private readonly normalize: boolean,
    private readonly maxTokens: number,
    private readonly opts: LocalEmbedderOptions & { name: string },
  ) {
    this.dimensions = config.hiddenSize;
    // The prefixes change the vectors, so their text is part of the identity (and cache key).
    this.id = `local:${opts.name}${prefixIdSuffix(opts)}`;
  }

  /** Loads a model directory; throws a message that names the missing piece. */
  static fromDir(dir: string, opts: LocalEmbedderOptions = {}): LocalEmbedder {
    const root = resolve(dir);
    const hint =
      'Install the bundled model with `npm run setup:model` (or point DRIFTLINE_LOCAL_MODEL_DIR at a sentence-transformers model directory).';
    if (!existsSync(root)) throw new Error(`local embedding model directory ${root} does not exist. ${hint}`);
    const configJson = readJson(join(root, 'config.json'));
    if (!configJson) throw new Error(`${root} has no config.json. ${hint}`);
    const weightsPath = join(root, 'model.safetensors');
    if (!existsSync(weightsPath)) throw new Error(`${root} has no model.safetensors (only safetensors weights are read). ${hint}`);
    const config = bertConfigFromJson(configJson);
    const weights = bertWeightsFrom(config, readSafetensors(weightsPath));
    const tokenizer = WordPieceTokenizer.fromDir(root);

    const poolingJson = readJson(join(root, '1_Pooling', 'config.json'));
    const pooling: Pooling = poolingJson?.pooling_mode_cls_token === true ? 'cls' : 'mean';
    const modules = readJson(join(root, 'modules.json')) as unknown as { type?: string }[] | undefined;
    // sentence-transformers models say whether they normalise; cosine search wants unit vectors
    // anyway, so without modules.json we normalise too.
    const normalize = Array.isArray(modules) ? modules.some((m) => String(m.type).endsWith('Normalize')) : true;
    const stConfig = readJson(join(root, 'sentence_bert_config.json'));
    const modelMax = typeof stConfig?.max_seq_length === 'number' ? stConfig.max_seq_length : config.maxPositions;
    const maxTokens = Math.min(opts.maxTokens ?? modelMax, config.maxPositions);
    return new LocalEmbedder(config, weights, tokenizer, pooling, normalize, maxTokens, {
      ...opts,
      name: opts.name ?? basename(root),
    });
  }

  /** One text, synchronously. */
  embedOne(text: string): Float32Array {
    const { ids } = this.tokenizer.encode(text, this.maxTokens);
    const hidden = bertForward(this.config, this.weights, ids);
    return pool(hidden, ids.length, this.config.hiddenSize, this.pooling, this.normalize);
  }

  async embed(texts: string[], opts: { kind?: EmbedKind; signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const prefix = (opts.kind ?? 'document') === 'query' ? (this.opts.queryPrefix ?? '') : (this.opts.documentPrefix ?? '');
    const out: Float32Array[] = [];
    for (const text of texts) {
      opts.signal?.throwIfAborted();
      out.push(this.embedOne(prefix + text));
      // CPU-bound: let timers, heartbeats and cancellation through between texts.
      await yieldToLoop();
    }
    return out;
  }
}
