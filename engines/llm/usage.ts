// Token usage and its price. Prices come from configuration (a table per model, in US dollars
// per million tokens); a model without a price has no cost, never a guessed one.

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
}

export type PriceTable = Record<string, ModelPrice>;

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
  };
}

/** The cost of one call's usage in USD, or undefined when the model has no price. */
export function costOf(model: string, usage: TokenUsage, prices: PriceTable): number | undefined {
  const p = prices[model];
  if (!p) return undefined;
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  return (fresh * p.prompt + cached * (p.cachedPrompt ?? p.prompt) + usage.completionTokens * p.completion) / 1e6;
}
