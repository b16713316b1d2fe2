// The embedded store: everything in one directory, no server. LanceDB (on disk, Arrow-native)
// holds each version as a table of points: payload columns, the sparse BM25F vector as two list
// columns, and the dense vector when there is one. Dense search is LanceDB's vector search
// (exact scan, prefiltered by role and names). The sparse side is an inverted index kept in
// memory per version, loaded from the table on first use and reloaded when the table changes
// (LanceDB's full-text search tokenizes for prose and knows nothing of Lean names).
// Version records and aliases are small JSON files written to a temporary name and renamed, so
// a reader sees the old alias or the new one, never a torn file.
//
// Layout under `root`:  lance/<version>.lance      one table per version
//                       versions/<version>.json    VersionInfo
//                       aliases/<library>.json     {"version": …}
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int32, List, Schema, Uint32, Utf8 } from 'apache-arrow';
import type { Declaration } from '../corpus';
import { prefetchLimit, reciprocalRankFusion } from '../fusion';
import { idf } from '../bm25';
import {
  checkLibraryName,
  pointId,
  roleOf,
  VersionNotFoundError,
  type IndexStore,
  type Role,
  type StoreHit,
  type StorePoint,
  type StoreSearch,
  type TheoremUses,
  type VersionInfo,
} from './store';

interface Loaded {
  tableVersion: number;
  complete: boolean;
  nprobes?: number;
  decls: Declaration[];
  roles: Role[];
  ords: number[];
  byName: Map<string, number>;
  postings: Map<number, { docs: number[]; weights: number[] }>;
  usedBy: Map<string, number[]>;
}

/** Versions with dense vectors and at least this many points get an approximate dense index. */
export const ANN_MIN_POINTS = 20_000;

function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function schemaFor(dimensions: number): Schema {
  const fields: Field[] = [
    new Field('id', new Utf8(), false),
    new Field('name', new Utf8(), false),
    new Field('kind', new Utf8(), false),
    new Field('role', new Utf8(), false),
    new Field('library', new Utf8(), false),
    new Field('module', new Utf8(), true),
    new Field('ord', new Int32(), false),
    new Field('decl', new Utf8(), false),
    new Field('sparse_idx', new List(new Field('item', new Uint32(), true)), false),
    new Field('sparse_val', new List(new Field('item', new Float32(), true)), false),
  ];
  if (dimensions > 0) {
    fields.push(new Field('vector', new FixedSizeList(dimensions, new Field('item', new Float32(), true)), false));
  }
  return new Schema(fields);
}

async function writeJsonAtomically(path: string, value: unknown): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify(value, null, 2));
  await rename(tmp, path);
}

export class EmbeddedStore implements IndexStore {
  readonly kind = 'embedded';
  private db?: Promise<lancedb.Connection>;
  private readonly tables = new Map<string, Promise<lancedb.Table>>();
  private readonly loaded = new Map<string, Promise<Loaded>>();
  /** Tables of complete versions, opened without per-read consistency checks (they never change). */
  private readonly frozen = new Map<string, Promise<lancedb.Table>>();
  private frozenDb?: Promise<lancedb.Connection>;

  constructor(readonly root: string) {}

  private connection(): Promise<lancedb.Connection> {
    // Every read checks for newer table versions: a searching process sees a build's upserts.
    this.db ??= mkdir(join(this.root, 'lance'), { recursive: true }).then(() =>
      lancedb.connect(join(this.root, 'lance'), { readConsistencyInterval: 0 }),
    );
    return this.db;
  }

  private versionPath(version: string): string {
    return join(this.root, 'versions', `${version}.json`);
  }

  private aliasPath(library: string): string {
    checkLibraryName(library);
    return join(this.root, 'aliases', `${library}.json`);
  }

  private async table(version: string): Promise<lancedb.Table> {
    let t = this.tables.get(version);
    if (!t) {
      t = (async () => {
        const db = await this.connection();
        if (!(await db.tableNames()).includes(version)) throw new VersionNotFoundError(version);
        return db.openTable(version);
      })();
      t.catch(() => this.tables.delete(version));
      this.tables.set(version, t);
    }
    return t;
  }

  async createVersion(info: VersionInfo): Promise<void> {
    await mkdir(join(this.root, 'versions'), { recursive: true });
    const db = await this.connection();
    if (!(await db.tableNames()).includes(info.version)) {
      await db.createEmptyTable(info.version, schemaFor(info.dimensions), { existOk: true });
    }
    if (!existsSync(this.versionPath(info.version))) await writeJsonAtomically(this.versionPath(info.version), info);
  }

  async getVersion(version: string): Promise<VersionInfo | undefined> {
    try {
      return JSON.parse(await readFile(this.versionPath(version), 'utf8')) as VersionInfo;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async listVersions(library?: string): Promise<VersionInfo[]> {
    const dir = join(this.root, 'versions');
    if (!existsSync(dir)) return [];
    const infos: VersionInfo[] = [];
    for (const f of await readdir(dir)) {
      if (!f.endsWith('.json')) continue;
      const info = await this.getVersion(f.slice(0, -'.json'.length));
      if (info && (!library || info.library === library)) infos.push(info);
    }
    return infos.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.version.localeCompare(b.version));
  }

  async markComplete(version: string): Promise<void> {
    const info = await this.getVersion(version);
    if (!info) throw new VersionNotFoundError(version);
    if (info.completedAt) return;
    const done: VersionInfo = { ...info, completedAt: new Date().toISOString() };
    const count = await this.count(version);
    if (info.dimensions > 0 && count >= ANN_MIN_POINTS) {
      // Large versions get an IVF index on the dense vectors (exact vectors in √n partitions,
      // 1/8 of them probed): an exact scan grows with the library, this does not.
      const partitions = Math.round(Math.sqrt(count));
      await (
        await this.table(version)
      ).createIndex('vector', {
        config: lancedb.Index.ivfFlat({ distanceType: 'cosine', numPartitions: partitions }),
        replace: true,
      });
      done.denseIndex = { kind: 'ivf_flat', partitions, nprobes: Math.max(16, Math.ceil(partitions / 8)) };
    }
    await writeJsonAtomically(this.versionPath(version), done);
    this.loaded.delete(version);
  }

  async deleteVersion(version: string): Promise<void> {
    const info = await this.getVersion(version);
    if (info && (await this.getAlias(info.library)) === version) {
      throw new Error(`version ${version} is the current one of library ${info.library}; promote another first`);
    }
    const db = await this.connection();
    if ((await db.tableNames()).includes(version)) await db.dropTable(version);
    this.tables.delete(version);
    this.loaded.delete(version);
    (await this.frozen.get(version)?.catch(() => undefined))?.close();
    this.frozen.delete(version);
    await rm(this.versionPath(version), { force: true });
  }

  async upsert(version: string, points: readonly StorePoint[]): Promise<void> {
    if (points.length === 0) return;
    const info = await this.getVersion(version);
    if (!info) throw new VersionNotFoundError(version);
    const rows = points.map((p) => {
      if (info.dimensions > 0 && p.dense?.length !== info.dimensions) {
        throw new Error(
          `point ${p.decl.name}: dense vector of ${p.dense?.length ?? 0} dimensions, version ${version} has ${info.dimensions}`,
        );
      }
      const row: Record<string, unknown> = {
        id: pointId(version, p.decl.name),
        name: p.decl.name,
        kind: p.decl.kind,
        role: roleOf(p.decl),
        library: info.library,
        module: p.decl.module ?? null,
        ord: p.ord,
        decl: JSON.stringify(p.decl),
        sparse_idx: p.sparse.indices,
        sparse_val: p.sparse.values,
      };
      if (info.dimensions > 0) row.vector = Array.from(p.dense!);
      return row;
    });
    const table = await this.table(version);
    const data = lancedb.makeArrowTable(rows, { schema: schemaFor(info.dimensions) });
    await table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data);
    this.loaded.delete(version);
    this.frozen.delete(version);
  }

  async count(version: string): Promise<number> {
    return (await this.table(version)).countRows();
  }

  /** The version's points in memory (payload, postings), reloaded when the table changed. */
  private async load(version: string): Promise<Loaded> {
    const cached = this.loaded.get(version);
    // A complete version never changes (a build started again rewrites identical points), so
    // its points are not checked again; one still being built is reloaded when its table moved.
    const settled = cached ? await cached.catch(() => undefined) : undefined;
    if (settled?.complete) return settled;
    const table = await this.table(version);
    const current = await table.version();
    if (settled && settled.tableVersion === current) return settled;
    const info = await this.getVersion(version);
    const complete = Boolean(info?.completedAt);
    const nprobes = info?.denseIndex?.nprobes;
    const p = (async (): Promise<Loaded> => {
      const arrow = await table.query().select(['decl', 'role', 'ord', 'sparse_idx', 'sparse_val']).toArrow();
      const n = arrow.numRows;
      const declCol = arrow.getChild('decl')!;
      const roleCol = arrow.getChild('role')!;
      const ordCol = arrow.getChild('ord')!;
      const idxCol = arrow.getChild('sparse_idx')!;
      const valCol = arrow.getChild('sparse_val')!;
      const rows: { decl: Declaration; role: Role; ord: number; idx: ArrayLike<number>; val: ArrayLike<number> }[] = [];
      for (let i = 0; i < n; i++) {
        rows.push({
          decl: JSON.parse(declCol.get(i) as string) as Declaration,
          role: roleCol.get(i) as Role,
          ord: ordCol.get(i) as number,
          idx: (idxCol.get(i) as { toArray(): ArrayLike<number> }).toArray(),
          val: (valCol.get(i) as { toArray(): ArrayLike<number> }).toArray(),
        });
      }
      rows.sort((a, b) => a.ord - b.ord);
      const l: Loaded = {
        tableVersion: current,
        complete,
        nprobes,
        decls: [],
        roles: [],
        ords: [],
        byName: new Map(),
        postings: new Map(),
        usedBy: new Map(),
      };
      rows.forEach((r, i) => {
        l.decls.push(r.decl);
        l.roles.push(r.role);
        l.ords.push(r.ord);
        l.byName.set(r.decl.name, i);
        for (let j = 0; j < r.idx.length; j++) {
          const t = r.idx[j]!;
          let post = l.postings.get(t);
          if (!post) l.postings.set(t, (post = { docs: [], weights: [] }));
          post.docs.push(i);
          post.weights.push(r.val[j]!);
        }
        if (r.role === 'theorem') {
          for (const u of r.decl.uses) {
            const list = l.usedBy.get(u);
            if (list) list.push(i);
            else l.usedBy.set(u, [i]);
          }
        }
      });
      return l;
    })();
    this.loaded.set(version, p);
    p.catch(() => this.loaded.delete(version));
    return p;
  }

  private sparseRanking(l: Loaded, req: StoreSearch, limit: number): { i: number; score: number }[] {
    const sparse = req.sparse!;
    const n = l.decls.length;
    const scores = new Float64Array(n);
    const touched: number[] = [];
    for (let j = 0; j < sparse.indices.length; j++) {
      const post = l.postings.get(sparse.indices[j]!);
      if (!post) continue;
      const scale = idf(n, post.docs.length) * sparse.values[j]!;
      for (let m = 0; m < post.docs.length; m++) {
        const d = post.docs[m]!;
        if (scores[d] === 0) touched.push(d);
        scores[d]! += scale * post.weights[m]!;
      }
    }
    const exclude = req.exclude?.length ? new Set(req.exclude) : undefined;
    const only = req.only ? new Set(req.only) : undefined;
    const hits: { i: number; score: number }[] = [];
    for (const i of touched) {
      const s = scores[i]!;
      if (s <= 0 || l.roles[i] !== req.role) continue;
      const name = l.decls[i]!.name;
      if (exclude?.has(name) || (only && !only.has(name))) continue;
      hits.push({ i, score: s });
    }
    hits.sort((a, b) => b.score - a.score || a.i - b.i);
    return hits.slice(0, limit);
  }

  private frozenTable(version: string): Promise<lancedb.Table> {
    let t = this.frozen.get(version);
    if (!t) {
      this.frozenDb ??= lancedb.connect(join(this.root, 'lance'));
      t = this.frozenDb.then((db) => db.openTable(version));
      t.catch(() => this.frozen.delete(version));
      this.frozen.set(version, t);
    }
    return t;
  }

  private async denseRanking(version: string, req: StoreSearch, limit: number, l: Loaded): Promise<{ name: string; score: number }[]> {
    const table = l.complete ? await this.frozenTable(version) : await this.table(version);
    const filters = [`role = ${sqlString(req.role)}`];
    if (req.exclude?.length) filters.push(`name NOT IN (${req.exclude.map(sqlString).join(', ')})`);
    if (req.only) {
      if (req.only.length === 0) return [];
      filters.push(`name IN (${req.only.map(sqlString).join(', ')})`);
    }
    let query = table
      .vectorSearch(Array.from(req.dense!))
      .distanceType('cosine')
      .where(filters.join(' AND '))
      .select(['name', 'ord', '_distance'])
      .limit(limit);
    if (l.nprobes) query = query.nprobes(l.nprobes);
    const rows = (await query.toArray()) as { name: string; ord: number; _distance: number }[];
    return rows.map((r) => ({ name: r.name, ord: r.ord, score: 1 - r._distance })).sort((a, b) => b.score - a.score || a.ord - b.ord);
  }

  async search(version: string, req: StoreSearch): Promise<StoreHit[]> {
    if (req.k <= 0) return [];
    if (!req.sparse && !req.dense) throw new Error('a search needs a sparse or a dense query vector');
    const l = await this.load(version);
    if (!req.dense) {
      return this.sparseRanking(l, req, req.k).map((h) => ({ decl: l.decls[h.i]!, score: h.score }));
    }
    const limit = prefetchLimit(req.k);
    const dense = await this.denseRanking(version, req, req.sparse ? limit : req.k, l);
    if (!req.sparse) return dense.flatMap((h) => (l.byName.has(h.name) ? [{ decl: l.decls[l.byName.get(h.name)!]!, score: h.score }] : []));
    const sparse = this.sparseRanking(l, req, limit).map((h) => l.decls[h.i]!.name);
    return reciprocalRankFusion([{ ids: dense.map((h) => h.name) }, { ids: sparse }], { limit: req.k }).flatMap((h) =>
      l.byName.has(h.id) ? [{ decl: l.decls[l.byName.get(h.id)!]!, score: h.score }] : [],
    );
  }

  async get(version: string, names: readonly string[]): Promise<Map<string, Declaration>> {
    const l = await this.load(version);
    const out = new Map<string, Declaration>();
    for (const n of names) {
      const i = l.byName.get(n);
      if (i !== undefined) out.set(n, l.decls[i]!);
    }
    return out;
  }

  async theoremsUsing(version: string, names: readonly string[], exclude: readonly string[] = []): Promise<Declaration[]> {
    const l = await this.load(version);
    const ex = new Set(exclude);
    const positions = new Set<number>();
    for (const n of names) for (const i of l.usedBy.get(n) ?? []) positions.add(i);
    return [...positions]
      .sort((a, b) => a - b)
      .map((i) => l.decls[i]!)
      .filter((d) => !ex.has(d.name));
  }

  async theoremUses(version: string): Promise<TheoremUses[]> {
    const l = await this.load(version);
    const out: { ord: number; t: TheoremUses }[] = [];
    l.decls.forEach((d, i) => {
      if (l.roles[i] === 'theorem')
        out.push({
          ord: l.ords[i]!,
          t: d.module !== undefined ? { name: d.name, uses: d.uses, module: d.module } : { name: d.name, uses: d.uses },
        });
    });
    return out.sort((a, b) => a.ord - b.ord).map(({ t }) => t);
  }

  async getAlias(library: string): Promise<string | undefined> {
    try {
      return (JSON.parse(await readFile(this.aliasPath(library), 'utf8')) as { version: string }).version;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async setAlias(library: string, version: string): Promise<void> {
    const info = await this.getVersion(version);
    if (!info) throw new VersionNotFoundError(version);
    if (info.library !== library) throw new Error(`version ${version} belongs to library ${info.library}, not ${library}`);
    await mkdir(join(this.root, 'aliases'), { recursive: true });
    await writeJsonAtomically(this.aliasPath(library), { version, updatedAt: new Date().toISOString() });
  }

  async close(): Promise<void> {
    for (const t of this.tables.values()) (await t.catch(() => undefined))?.close();
    for (const t of this.frozen.values()) (await t.catch(() => undefined))?.close();
    this.tables.clear();
    this.frozen.clear();
    this.loaded.clear();
    (await this.frozenDb?.catch(() => undefined))?.close();
    this.frozenDb = undefined;
    const db = await this.db?.catch(() => undefined);
    db?.close();
    this.db = undefined;
  }
}
