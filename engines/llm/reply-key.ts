// What makes two LLM requests the same request: the provider, the model, the messages, the tools
// and every sampling parameter, plus the sample index (k samples of one item at temperature > 0
// must be k different replies, and the same k replies again on a re-run). The key is the
// SHA-256 of a canonical JSON of those, so it does not depend on property order.
import { createHash } from 'node:crypto';

export interface ReplyKeyParts {
  /** Provider identity: its base URL. */
  provider: string;
  model: string;
  messages: unknown[];
  tools?: unknown;
  /** temperature, max_tokens, response_format, seed, … as sent. */
  params: Record<string, unknown>;
  /** 0 unless a sweep asks for several samples. */
  sample: number;
}

/** JSON with object keys sorted at every level; `undefined` members dropped as JSON does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function replyKey(parts: ReplyKeyParts): string {
  return createHash('sha256')
    .update(canonicalJson({ v: 1, ...parts }))
    .digest('hex');
}
