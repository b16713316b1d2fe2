// The index contract the retrieve and illustrate stages use, and its lexical implementation.
// Premises (what the formalizer needs) are the non-theorem declarations: gold dependencies are
// never theorems. Theorems are searched separately: they are the examples of usage.
import { Bm25Index, type Bm25Document, type Bm25Json, type Bm25Params } from './bm25';
import { isTheorem, type Declaration } from './corpus';
import { tokenize, tokenizeName } from './lean-tokenize';
import { applyUsagePrior, DEFAULT_USAGE_PRIOR } from './usage-prior';

export interface Hit {
  decl: Declaration;
  score: number;
}

export interface SearchOptions {
  /** Full names never to return. */
  exclude?: readonly string[];
}

/** A searchable library. Asynchronous, because most implementations ask a store (embedded
 * on disk, or Qdrant over HTTP) and an embedder; `LexicalIndex` is the in-memory default. */
export interface PremiseIndex {
  readonly library: string;
  /** Number of declarations. */
  readonly size: number;
  /** `lexical` when no embedder is involved; otherwise a short description (e.g. hybrid …). */
  readonly kind: 'lexical' | string;
  /** Non-theorem declarations most similar to the query, best first. */
  searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]>;
  /** Theorems most similar to the query, best first. */
  searchTheorems(query: string, k: number, opts?: SearchOptions): Promise<Hit[]>;
  /** Similarity of the query to each named theorem (0 when unknown or not similar at all),
   * so illustration can rank its candidates without searching the whole library. */
  scoreTheorems(query: string, names: readonly string[]): Promise<Map<string, number>>;
  get(name: string): Promise<Declaration | undefined>;
  /** Theorems whose `uses` include at least one of the names, in corpus order. */
  theoremsUsing(names: readonly string[], opts?: SearchOptions): Promise<Declaration[]>;
}

/** Field weights, chosen by a small grid search on the ConNF development split
 * (bench/retrieval-eval.ts; F1@5 27.5 with all weights 1 and k1 = 1.2, 29.8 with these).
 * The name decides most: a query mentioning `ConNF.cloud` or "near-litter" should find it;
 * generated informal text and long signatures mention many other constants, so they count less.
 * A higher k1 lets repeated query terms keep adding, which long statements need. */
export const DEFAULT_PREMISE_PARAMS: Bm25Params = {
  k1: 2,
  fields: {
    name: { weight: 6, b: 0.75 },
    signature: { weight: 0.5, b: 0.75 },
    docstring: { weight: 0.5, b: 0.75 },
    informal: { weight: 0.5, b: 0.75 },
  },
};
export const DEFAULT_THEOREM_PARAMS: Bm25Params = DEFAULT_PREMISE_PARAMS;

export interface LexicalIndexOptions {
  premiseParams?: Bm25Params;
  theoremParams?: Bm25Params;
  /** Weight α of the library-usage prior in premise search (usage-prior.ts); 0 turns it off. */
  usagePrior?: number;
}

export interface LexicalIndexJson {
  format: 'lexical/1';
  library: string;
  declarations: Declaration[];
  premises: Bm25Json;
  theorems: Bm25Json;
  usagePrior?: number;
}

export function declarationDocument(d: Declaration): Bm25Document {
  return {
    name: tokenizeName(d.name),
    signature: tokenize(d.signature),
    docstring: d.docstring ? tokenize(d.docstring) : [],
    informal: d.informal ? tokenize(d.informal) : [],
  };
}

export class LexicalIndex implements PremiseIndex {
  readonly kind = 'lexical';
  private readonly byName = new Map<string, Declaration>();
  private readonly premiseDecls: Declaration[] = [];
  private readonly theoremDecls: Declaration[] = [];
  private readonly theoremPos = new Map<string, number>();
  /** premise name → positions (in theoremDecls) of the theorems using it */
  private readonly usedBy = new Map<string, number[]>();

  private constructor(
    readonly library: string,
    private readonly declarations: readonly Declaration[],
    private readonly premiseBm25: Bm25Index,
    private readonly theoremBm25: Bm25Index,
    readonly usagePrior: number = DEFAULT_USAGE_PRIOR,
  ) {
    for (const d of declarations) this.byName.set(d.name, d);
    for (const d of declarations) (isTheorem(d) ? this.theoremDecls : this.premiseDecls).push(d);
    this.theoremDecls.forEach((t, i) => {
      this.theoremPos.set(t.name, i);
      for (const u of t.uses) {
        const list = this.usedBy.get(u);
        if (list) list.push(i);
        else this.usedBy.set(u, [i]);
      }
    });
    if (premiseBm25.size !== this.premiseDecls.length || theoremBm25.size !== this.theoremDecls.length) {
      throw new Error(`index for ${library} is inconsistent with its declarations; rebuild it`);
    }
  }

  static build(library: string, declarations: readonly Declaration[], opts: LexicalIndexOptions = {}): LexicalIndex {
    const premises = declarations.filter((d) => !isTheorem(d));
    const theorems = declarations.filter((d) => isTheorem(d));
    return new LexicalIndex(
      library,
      declarations,
      Bm25Index.build(premises.map(declarationDocument), opts.premiseParams ?? DEFAULT_PREMISE_PARAMS),
      Bm25Index.build(theorems.map(declarationDocument), opts.theoremParams ?? DEFAULT_THEOREM_PARAMS),
      opts.usagePrior ?? DEFAULT_USAGE_PRIOR,
    );
  }

  static fromJSON(json: LexicalIndexJson): LexicalIndex {
    if (json.format !== 'lexical/1') throw new Error(`unsupported index format ${String(json.format)}`);
    return new LexicalIndex(
      json.library,
      json.declarations,
      Bm25Index.fromJSON(json.premises),
      Bm25Index.fromJSON(json.theorems),
      json.usagePrior ?? DEFAULT_USAGE_PRIOR,
    );
  }

  toJSON(): LexicalIndexJson {
    return {
      format: 'lexical/1',
      library: this.library,
      declarations: [...this.declarations],
      premises: this.premiseBm25.toJSON(),
      theorems: this.theoremBm25.toJSON(),
      usagePrior: this.usagePrior,
    };
  }

  get size(): number {
    return this.declarations.length;
  }

  async searchPremises(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    if (!(this.usagePrior > 0) || k <= 0) return search(this.premiseBm25, this.premiseDecls, query, k, opts);
    // Every lexical match is a candidate; the prior re-ranks them (uses by excluded theorems,
    // such as the item under evaluation, do not count).
    const hits = search(this.premiseBm25, this.premiseDecls, query, this.premiseDecls.length, opts);
    const excluded = opts?.exclude?.length ? new Set(opts.exclude) : undefined;
    const uses = (name: string) => {
      const list = this.usedBy.get(name) ?? [];
      return excluded ? list.filter((i) => !excluded.has(this.theoremDecls[i]!.name)).length : list.length;
    };
    return applyUsagePrior(hits.map((h) => ({ ...h, name: h.decl.name })), uses, this.maxUses, this.usagePrior)
      .slice(0, k)
      .map((h) => ({ decl: h.decl, score: h.score }));
  }

  /** The most theorems any premise is used by (scales the usage prior). */
  private get maxUses(): number {
    let max = 0;
    for (const list of this.usedBy.values()) max = Math.max(max, list.length);
    return max;
  }

  async searchTheorems(query: string, k: number, opts?: SearchOptions): Promise<Hit[]> {
    return search(this.theoremBm25, this.theoremDecls, query, k, opts);
  }

  async scoreTheorems(query: string, names: readonly string[]): Promise<Map<string, number>> {
    const scores = this.theoremBm25.scores(tokenize(query));
    const out = new Map<string, number>();
    for (const n of names) {
      const i = this.theoremPos.get(n);
      out.set(n, i === undefined ? 0 : scores[i]!);
    }
    return out;
  }

  async get(name: string): Promise<Declaration | undefined> {
    return this.byName.get(name);
  }

  async theoremsUsing(names: readonly string[], opts?: SearchOptions): Promise<Declaration[]> {
    const exclude = new Set(opts?.exclude ?? []);
    const positions = new Set<number>();
    for (const n of names) for (const i of this.usedBy.get(n) ?? []) positions.add(i);
    return [...positions]
      .sort((a, b) => a - b)
      .map((i) => this.theoremDecls[i]!)
      .filter((t) => !exclude.has(t.name));
  }
}

function search(bm25: Bm25Index, decls: readonly Declaration[], query: string, k: number, opts?: SearchOptions): Hit[] {
  const exclude = opts?.exclude?.length ? new Set(opts.exclude) : undefined;
  const skip = exclude ? (i: number) => exclude.has(decls[i]!.name) : undefined;
  return bm25.search(tokenize(query), k, skip).map((h) => ({ decl: decls[h.doc]!, score: h.score }));
}
