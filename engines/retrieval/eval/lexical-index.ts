// The in-memory lexical index (BM25F over Lean-aware tokens, plus the usage prior): the
// reference the evaluation and benchmarks compare the store path against.
import { Bm25Index, type Bm25Json, type Bm25Params } from '../bm25';
import { declarationDocument, DEFAULT_PREMISE_PARAMS, DEFAULT_THEOREM_PARAMS } from '../bm25-fields';
import { isTheorem, type Declaration } from '../corpus';
import { tokenize } from '../lean-tokenize';
import type { Hit, PremiseIndex, SearchOptions } from '../premise-index';
import { applyUsagePrior, DEFAULT_USAGE_PRIOR } from '../usage-prior';

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
    // The scale too leaves the excluded theorems out.
    let maxUses = 0;
    for (const name of this.usedBy.keys()) maxUses = Math.max(maxUses, uses(name));
    return applyUsagePrior(
      hits.map((h) => ({ ...h, name: h.decl.name })),
      uses,
      maxUses,
      this.usagePrior,
    )
      .slice(0, k)
      .map((h) => ({ decl: h.decl, score: h.score }));
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

  async sameFileTheorems(names: readonly string[]): Promise<string[]> {
    const modules = new Set(names.map((n) => this.byName.get(n)?.module).filter((m): m is string => m !== undefined));
    return modules.size === 0 ? [] : this.theoremDecls.filter((t) => t.module !== undefined && modules.has(t.module)).map((t) => t.name);
  }
}

function search(bm25: Bm25Index, decls: readonly Declaration[], query: string, k: number, opts?: SearchOptions): Hit[] {
  const exclude = opts?.exclude?.length ? new Set(opts.exclude) : undefined;
  const skip = exclude ? (i: number) => exclude.has(decls[i]!.name) : undefined;
  return bm25.search(tokenize(query), k, skip).map((h) => ({ decl: decls[h.doc]!, score: h.score }));
}
