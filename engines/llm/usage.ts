// Token usage and its price. Prices come from configuration (a table per model, in US dollars
// per million tokens); a model without a price has no cost, never a guessed one. A call sent in a
// provider batch costs the synchronous price times the model's batch factor.

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the provider served from its own prompt cache (billed at a lower rate). */
  cachedTokens: number;
}

export interface ModelPrice {
  /** USD per million prompt tokens. */
  prompt: number;
  /** USD per million completion tokens. */
  completion: number;
  /** USD per million cached prompt tokens; default: the prompt price. */
  cachedPrompt?: number;
  /** The batch price as a fraction of the synchronous one, in (0, 1]; default DEFAULT_BATCH_FACTOR. */
  batchFactor?: number;
}

/** What the OpenAI Batch API charges against a synchronous call (and most providers that serve
 * the same protocol). */
export const DEFAULT_BATCH_FACTOR = 0.5;

export type PriceTable = Record<string, ModelPrice>;

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
  };
}

/** The cost of one call's usage in USD, or undefined when the model has no price; with
 * `batch`, the price of the same call answered through a provider batch. */
export function costOf(model: string, usage: TokenUsage, prices: PriceTable, opts: { batch?: boolean } = {}): number | undefined {
  const p = prices[model];
  if (!p) return undefined;
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  const sync = (fresh * p.prompt + cached * (p.cachedPrompt ?? p.prompt) + usage.completionTokens * p.completion) / 1e6;
  return opts.batch ? sync * (p.batchFactor ?? DEFAULT_BATCH_FACTOR) : sync;
}
