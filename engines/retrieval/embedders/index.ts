// Builds the configured Embedder (or none). Entry points pass the `embeddings` settings of the
// configuration; nothing here reads the environment.
import type { Embedder } from '../embedder';
import { createOpenAIEmbedder } from './openai';
import { LocalEmbedder } from './local';

export interface EmbedderSettings {
  embedder: 'none' | 'openai' | 'local';
  model?: string | undefined;
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  dimensions?: number | undefined;
  queryPrefix?: string | undefined;
  documentPrefix?: string | undefined;
  batchSize?: number | undefined;
  localModelDir: string;
  timeoutMs?: number | undefined;
  /** Client-side retries for OpenAI-compatible endpoints (0: leave it to Temporal). */
  maxRetries?: number | undefined;
}

/** The configured embedder; undefined when retrieval is lexical only. */
export async function createEmbedder(s: EmbedderSettings, signal?: AbortSignal): Promise<Embedder | undefined> {
  switch (s.embedder) {
    case 'none':
      return undefined;
    case 'local':
      return LocalEmbedder.fromDir(s.localModelDir, {
        ...(s.queryPrefix ? { queryPrefix: s.queryPrefix } : {}),
        ...(s.documentPrefix ? { documentPrefix: s.documentPrefix } : {}),
      });
    case 'openai':
      if (!s.baseURL || !s.model)
        throw new Error('the openai embedder needs a base URL and a model name (DRIFTLINE_EMBEDDINGS_BASE_URL, DRIFTLINE_EMBEDDING_MODEL)');
      return createOpenAIEmbedder(
        {
          baseURL: s.baseURL,
          model: s.model,
          ...(s.apiKey ? { apiKey: s.apiKey } : {}),
          ...(s.dimensions ? { dimensions: s.dimensions } : {}),
          ...(s.queryPrefix ? { queryPrefix: s.queryPrefix } : {}),
          ...(s.documentPrefix ? { documentPrefix: s.documentPrefix } : {}),
          ...(s.batchSize ? { batchSize: s.batchSize } : {}),
          ...(s.timeoutMs ? { timeoutMs: s.timeoutMs } : {}),
          ...(s.maxRetries !== undefined ? { maxRetries: s.maxRetries } : {}),
        },
        signal,
      );
    default: {
      const never: never = s.embedder;
      throw new Error(`unknown embedder ${String(never)}`);
    }
  }
}
