// A persistent cache in front of an Embedder: vectors keyed by (embedder id, kind, text hash),
// appended to one file per embedder, so an evaluation rerun or a resumed build re-embeds
// nothing it has seen. The file is append-only JSON lines; a torn last line is ignored.
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EmbedKind, Embedder } from '../embedder';

export function cacheFileFor(dir: string, embedderId: string): string {
  return join(dir, `${embedderId.replace(/[^A-Za-z0-9_.@+-]+/g, '_')}.jsonl`);
}

export class CachingEmbedder implements Embedder {
  private readonly vectors = new Map<string, Float32Array>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly inner: Embedder,
    /** The cache file; absent: in memory only. */
    private readonly file?: string,
  ) {
    if (file && existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line) continue;
        try {
          const { k, v } = JSON.parse(line) as { k: string; v: string };
          const buf = Buffer.from(v, 'base64');
          const vec = new Float32Array(buf.length / 4);
          for (let i = 0; i < vec.length; i++) vec[i] = buf.readFloatLE(i * 4);
          if (vec.length === inner.dimensions) this.vectors.set(k, vec);
        } catch {
          // a line torn by a crash: that vector is simply computed again
        }
      }
    }
  }

  get id(): string {
    return this.inner.id;
  }

  get dimensions(): number {
    return this.inner.dimensions;
  }

  get size(): number {
    return this.vectors.size;
  }

  private key(kind: EmbedKind, text: string): string {
    return createHash('sha256').update(`${this.inner.id}\0${kind}\0${text}`).digest('base64url').slice(0, 32);
  }

  async embed(texts: string[], opts: { kind?: EmbedKind; signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const kind = opts.kind ?? 'document';
    const keys = texts.map((t) => this.key(kind, t));
    const missing = [
      ...new Set(
        keys
          .map((k, i) => (this.vectors.has(k) ? -1 : i))
          .filter((i) => i >= 0)
          .map((i) => texts[i]!),
      ),
    ];
    this.hits += texts.length - missing.length;
    this.misses += missing.length;
    // In slices, so an interrupted long run keeps what it computed.
    for (let i = 0; i < missing.length; i += 16) {
      const slice = missing.slice(i, i + 16);
      const vecs = await this.inner.embed(slice, opts);
      const lines: string[] = [];
      slice.forEach((t, j) => {
        const k = this.key(kind, t);
        const v = vecs[j]!;
        this.vectors.set(k, v);
        lines.push(JSON.stringify({ k, v: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }));
      });
      if (this.file) {
        mkdirSync(dirname(this.file), { recursive: true });
        appendFileSync(this.file, lines.join('\n') + '\n');
      }
    }
    return keys.map((k) => this.vectors.get(k)!);
  }
}
