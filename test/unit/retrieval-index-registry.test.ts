import { appendFile, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IndexRegistry, UnknownLibraryError } from '../../engines/retrieval/index-registry';
import { buildInProcess } from '../../engines/retrieval/stores/build';
import { EmbeddedStore } from '../../engines/retrieval/stores/embedded';
import { HashEmbedder } from '../helpers/hash-embedder';
import { ConceptEmbedder } from '../helpers/concept-embedder';

const MINI = join(resolve(__dirname, '../fixtures/corpus'), 'mini.jsonl');
let work: string;
let corpusPath: string;
let dir: string;
const registries: IndexRegistry[] = [];
function registry(opts: ConstructorParameters<typeof IndexRegistry>[0]): IndexRegistry {
  const r = new IndexRegistry(opts);
  registries.push(r);
  return r;
}

function memoryLog() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  return {
    lines,
    info: (obj: object, msg?: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg?: string) => lines.push({ level: 'warn', obj, msg }),
  };
}

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'driftline-index-'));
  corpusPath = join(work, 'mini.jsonl');
  dir = join(work, 'indexes');
  await copyFile(MINI, corpusPath);
});
afterEach(async () => {
  for (const r of registries.splice(0)) await r.close();
  await rm(work, { recursive: true, force: true });
});

describe('IndexRegistry', () => {
  it('builds and promotes an index when the library has none, then serves it without rebuilding', async () => {
    const first = registry({ libraries: [{ name: 'mini', corpusPath }], dir });
    const opened = await first.open('mini');
    expect(opened.built).toBe(true);
    expect(opened.version).toMatch(/^mini-[0-9a-f]{12}-lexical-s\d+t\d+$/);
    expect(opened.index.kind).toBe('lexical');
    expect(await first.store.getAlias('mini')).toBe(opened.version);

    const second = registry({ libraries: [{ name: 'mini', corpusPath }], dir });
    const again = await second.open('mini');
    expect(again).toMatchObject({ built: false, version: opened.version });
    expect(again.index.size).toBe(21);
    expect((await again.index.searchPremises('the order of a', 1))[0]?.decl.name).toBe('orderOf');
  });

  it('keeps serving the promoted version when the corpus changes, and says how to rebuild', async () => {
    const first = await registry({ libraries: [{ name: 'mini', corpusPath }], dir }).open('mini');
    await appendFile(
      corpusPath,
      JSON.stringify({ name: 'Nat.Coprime', kind: 'def', signature: 'def Nat.Coprime (m n : ℕ) : Prop' }) + '\n',
    );
    const log = memoryLog();
    const r = registry({ libraries: [{ name: 'mini', corpusPath }], dir, log });
    const again = await r.open('mini');
    expect(again).toMatchObject({ built: false, version: first.version });
    expect(log.lines.find((l) => l.level === 'warn')?.msg).toMatch(/corpus changed .*driftline index build --library mini/);
  });

  it('follows the alias: a promotion takes effect at the next get', async () => {
    const r = registry({ libraries: [{ name: 'mini', corpusPath }], dir });
    const before = await r.open('mini');
    await appendFile(
      corpusPath,
      JSON.stringify({ name: 'Nat.Coprime', kind: 'def', signature: 'def Nat.Coprime (m n : ℕ) : Prop' }) + '\n',
    );
    const next = await buildInProcess({ library: 'mini', corpusPath, store: r.store });
    expect(next.version).not.toBe(before.version);
    const after = await r.open('mini');
    expect(after.version).toBe(next.version);
    expect(await after.index.get('Nat.Coprime')).toBeDefined();
  });

  it('serves the current stored index when the corpus file is gone', async () => {
    const first = await registry({ libraries: [{ name: 'mini', corpusPath }], dir }).open('mini');
    await rm(corpusPath);
    const again = await registry({ libraries: [{ name: 'mini', corpusPath }], dir, log: memoryLog() }).open('mini');
    expect(again).toMatchObject({ built: false, version: first.version });
  });

  it('says what is missing when there is neither corpus nor index', async () => {
    const r = registry({ libraries: [{ name: 'mini', corpusPath: join(work, 'nope.jsonl') }], dir });
    await expect(r.get('mini')).rejects.toThrow(/corpus for library mini not found at .*nope\.jsonl/);
  });

  it('refuses a library name that is not a plain name', () => {
    expect(() => new IndexRegistry({ libraries: [{ name: '../evil', corpusPath }], dir })).toThrow(/library name/);
  });

  it('builds once for concurrent callers and defaults to the first library', async () => {
    const r = registry({
      libraries: [
        { name: 'mini', corpusPath },
        { name: 'other', corpusPath },
      ],
      dir,
    });
    expect(r.defaultLibrary).toBe('mini');
    const [a, b] = await Promise.all([r.open('mini'), r.open('mini')]);
    expect(a.version).toBe(b.version);
    expect(a.index).toBe(b.index);
    expect(await r.get()).toBe(a.index);
    expect((await r.store.listVersions('mini')).length).toBe(1);
    expect(await r.store.listVersions('other')).toEqual([]); // not opened yet
  });

  it('rejects an unknown library, listing the known ones', async () => {
    const r = registry({ libraries: [{ name: 'mini', corpusPath }], dir });
    const err = await r.get('mathlib').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownLibraryError);
    expect((err as Error).message).toBe('unknown library "mathlib"; known libraries: mini');
  });

  it('ready() opens every library', async () => {
    const r = registry({
      libraries: [
        { name: 'mini', corpusPath },
        { name: 'copy', corpusPath },
      ],
      dir,
    });
    const status = await r.ready();
    expect(status.map((s) => [s.library, s.built, s.size])).toEqual([
      ['mini', true, 21],
      ['copy', true, 21],
    ]);
  });

  it('retries an open that failed once the cause is fixed', async () => {
    const missing = join(work, 'later.jsonl');
    const r = registry({ libraries: [{ name: 'later', corpusPath: missing }], dir });
    await expect(r.get('later')).rejects.toThrow(/not found/);
    await copyFile(MINI, missing);
    expect((await r.get('later')).size).toBe(21);
  });

  it('with an embedder, builds a hybrid version and searches it densely too', async () => {
    const embedder = new HashEmbedder();
    const store = new EmbeddedStore(join(work, 'hybrid'));
    const r = registry({ libraries: [{ name: 'mini', corpusPath }], store, embedder });
    const opened = await r.open('mini');
    expect(opened.version).toContain('test_hash_bag_64');
    expect(opened.index.kind).toMatch(/^hybrid/);
    const calls = embedder.calls;
    expect((await opened.index.searchPremises('a prime number p', 1))[0]?.decl.name).toBe('Nat.Prime');
    expect(embedder.calls).toBe(calls + 1);
  });

  it('with an embedder that knows synonyms, returns what only the dense side finds', async () => {
    // No corpus token matches "cardinality"; the dense side alone finds Finset.card.
    const embedder = new ConceptEmbedder();
    const r = registry({ libraries: [{ name: 'mini', corpusPath }], store: new EmbeddedStore(join(work, 'concepts')), embedder });
    const opened = await r.open('mini');
    expect(opened.index.kind).toMatch(/^hybrid/);
    const lexicalOnly = registry({ libraries: [{ name: 'mini', corpusPath }], store: new EmbeddedStore(join(work, 'lexical')) });
    const query = 'the cardinality of a monoid';
    expect((await (await lexicalOnly.get('mini')).searchPremises(query, 5)).map((h) => h.decl.name)).not.toContain('Finset.card');
    expect((await opened.index.searchPremises(query, 5)).map((h) => h.decl.name)).toContain('Finset.card');
  });
});
