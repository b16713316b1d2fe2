// Sub-queries of benchmark statements, asked of the decomposer once and kept in a JSON-lines
// file keyed by (decomposer model, statement), so evaluation reruns never ask again.
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SubQuery } from '../../../common/retrieval-types';

export class DecompositionCache {
  private readonly entries = new Map<string, SubQuery[]>();

  constructor(private readonly file: string) {
    if (!existsSync(file)) return;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const e = JSON.parse(line) as { key: string; subqueries: SubQuery[] };
        if (typeof e.key === 'string' && Array.isArray(e.subqueries)) this.entries.set(e.key, e.subqueries);
      } catch {
        // a torn last line: asked again
      }
    }
  }

  static key(model: string, statement: string): string {
    return createHash('sha256').update(`${model}\0${statement}`).digest('hex').slice(0, 40);
  }

  get(model: string, statement: string): SubQuery[] | undefined {
    return this.entries.get(DecompositionCache.key(model, statement));
  }

  set(model: string, statement: string, subqueries: SubQuery[]): void {
    const key = DecompositionCache.key(model, statement);
    this.entries.set(key, subqueries);
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, JSON.stringify({ key, model, statement: statement.slice(0, 200), subqueries }) + '\n');
  }
}
