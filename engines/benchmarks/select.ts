// Deterministic item selection: explicit ids, or offset + limit, or a seeded sample. The same
// selection over the same file always gives the same items in the same order.
import type { BenchmarkItem } from '../../common/sweep';

export interface Selection {
  /** Exactly these items, in this order; an unknown id is an error. */
  ids?: string[];
  /** Skip this many items first (file order). */
  offset?: number;
  /** At most this many items. */
  limit?: number;
  /** Draw `limit` items at random with this seed (after offset), kept in file order. */
  seed?: number;
}

/** mulberry32: a small, well-known 32-bit PRNG; enough to draw a reproducible sample. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function selectItems(items: BenchmarkItem[], sel: Selection): BenchmarkItem[] {
  if (sel.ids) {
    const byId = new Map(items.map((item) => [item.id, item]));
    const missing = sel.ids.filter((id) => !byId.has(id));
    if (missing.length)
      throw new Error(
        `benchmark has no item${missing.length > 1 ? 's' : ''} ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`,
      );
    return sel.ids.map((id) => byId.get(id)!);
  }
  let rest = items.slice(sel.offset ?? 0);
  if (sel.seed !== undefined && sel.limit !== undefined && sel.limit < rest.length) {
    // Partial Fisher–Yates over the indices, then back to file order.
    const rand = seededRandom(sel.seed);
    const idx = rest.map((_, i) => i);
    for (let i = 0; i < sel.limit; i++) {
      const j = i + Math.floor(rand() * (idx.length - i));
      [idx[i], idx[j]] = [idx[j]!, idx[i]!];
    }
    const chosen = idx.slice(0, sel.limit).sort((a, b) => a - b);
    return chosen.map((i) => rest[i]!);
  }
  if (sel.limit !== undefined) rest = rest.slice(0, sel.limit);
  return rest;
}
