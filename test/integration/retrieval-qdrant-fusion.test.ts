// The Qdrant store must fuse exactly as our reciprocalRankFusion does. Two checks that need no
// Qdrant server: Qdrant's published RRF formula, computed here, equals ours for the k the store
// sends; and the store's real client sends that k in the hybrid query body (captured by a small
// HTTP server that answers the Query API on loopback).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reciprocalRankFusion, RRF_DEFAULT_K, type RankedList } from '../../engines/retrieval/fusion';
import { QDRANT_RRF_K, QdrantStore } from '../../engines/retrieval/stores/qdrant';

/** Qdrant 1.19's RRF (lib/segment/src/common/reciprocal_rank_fusion.rs): a point at 0-based
 * position p of a source with weight w adds 1 / ((p + 1) / w + k − 1). */
function qdrantRrf(lists: readonly RankedList[], k: number): Map<string, number> {
  const scores = new Map<string, number>();
  for (const list of lists) {
    const w = list.weight ?? 1;
    list.ids.forEach((id, p) => scores.set(id, (scores.get(id) ?? 0) + 1 / ((p + 1) / w + k - 1)));
  }
  return scores;
}

describe('Qdrant RRF against reciprocalRankFusion', () => {
  const lists: RankedList[] = [{ ids: ['a', 'b', 'c', 'd'] }, { ids: ['c', 'e', 'a'] }];

  it('gives the same scores, point for point, for the k the store sends', () => {
    const ours = reciprocalRankFusion(lists);
    const theirs = qdrantRrf(lists, QDRANT_RRF_K);
    expect(ours.map((f) => f.id).sort()).toEqual([...theirs.keys()].sort());
    for (const f of ours) expect(theirs.get(f.id)).toBeCloseTo(f.score, 15);
    // The top hit of a single source scores 1/61, as ours does at k = 60.
    expect(qdrantRrf([{ ids: ['x'] }], QDRANT_RRF_K).get('x')).toBeCloseTo(1 / (RRF_DEFAULT_K + 1), 15);
  });

  it('differs for the k − 1 the store used to send (the bug this guards against)', () => {
    const ours = reciprocalRankFusion(lists);
    const off = qdrantRrf(lists, RRF_DEFAULT_K - 1);
    expect(off.get(ours[0]!.id)).not.toBeCloseTo(ours[0]!.score, 6);
  });
});

describe('QdrantStore hybrid search request', () => {
  let server: Server;
  let url: string;
  const bodies: { path: string; body: Record<string, unknown> }[] = [];
  let points: unknown[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        bodies.push({ path: req.url ?? '', body: raw ? JSON.parse(raw) : {} });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ result: { points }, status: 'ok', time: 0 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('asks Query API for RRF with k = ours + 1 over a dense and a sparse prefetch', async () => {
    const store = new QdrantStore({ url, prefix: 't' });
    await store.search('lib-v1', {
      role: 'premise',
      k: 5,
      sparse: { indices: [3, 7], values: [1, 2] },
      dense: new Float32Array([0.6, 0.8]),
    });
    const sent = bodies.find((b) => b.path.endsWith('/points/query'));
    expect(sent?.path).toBe('/collections/t-lib-v1/points/query');
    const body = sent!.body as { query: unknown; prefetch: { using: string; limit: number }[]; limit: number };
    expect(body.query).toEqual({ rrf: { k: RRF_DEFAULT_K + 1 } });
    expect(body.prefetch.map((p) => p.using).sort()).toEqual(['dense', 'lexical']);
    expect(body.prefetch.every((p) => p.limit === 40)).toBe(true);
    expect(body.limit).toBe(5);
  });

  it('keeps dense-only hits of negative cosine, as the embedded store does', async () => {
    const decl = (name: string) => ({ name, kind: 'def', signature: `def ${name}`, uses: [] });
    points = [
      { id: 1, version: 0, score: 0.4, payload: { name: 'A', ord: 0, decl: decl('A') } },
      { id: 2, version: 0, score: -0.2, payload: { name: 'B', ord: 1, decl: decl('B') } },
    ];
    const store = new QdrantStore({ url, prefix: 't' });
    const hits = await store.search('lib-v1', { role: 'premise', k: 2, dense: new Float32Array([1, 0]) });
    points = [];
    expect(hits.map((h) => [h.decl.name, h.score])).toEqual([
      ['A', 0.4],
      ['B', -0.2],
    ]);
  });
});
