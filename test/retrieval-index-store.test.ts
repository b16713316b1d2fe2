import { copyFile, mkdtemp, readFile, readdir, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IndexRegistry, openOrBuildIndex, UnknownLibraryError } from '../activities/retrieval/index-store';

const MINI = join(resolve(__dirname, 'fixtures/corpus'), 'mini.jsonl');
let work: string;
let corpusPath: string;
let dir: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'driftline-index-'));
  corpusPath = join(work, 'mini.jsonl');
  dir = join(work, 'indexes');
  await copyFile(MINI, corpusPath);
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('openOrBuildIndex', () => {
  it('builds and saves when none exists yet, then loads without rebuilding', async () => {
    const first = await openOrBuildIndex({ library: 'mini', corpusPath, dir, log: pino({ level: 'silent' }) });
    expect(first.built).toBe(true);
    expect(first.version).toMatch(/^mini-[0-9a-f]{12}-lex\d+-tok\d+$/);
    expect((await readFile(join(dir, 'mini', 'current'), 'utf8')).trim()).toBe(first.version);
    expect((await readdir(join(dir, 'mini'))).sort()).toEqual(['current', `${first.version}.json`]); // no temporary files left

    const second = await openOrBuildIndex({ library: 'mini', corpusPath, dir });
    expect(second.built).toBe(false);
    expect(second.version).toBe(first.version);
    expect(second.index.size).toBe(21);
    expect((await second.index.searchPremises('the order of a', 1))[0]?.decl.name).toBe('orderOf');
  });

  it('builds a new version when the corpus changes, and moves current to it', async () => {
    const first = await openOrBuildIndex({ library: 'mini', corpusPath, dir });
    await appendFile(
      corpusPath,
      JSON.stringify({ name: 'Nat.Coprime', kind: 'def', signature: 'def Nat.Coprime (m n : ℕ) : Prop' }) + '\n',
    );
    const second = await openOrBuildIndex({ library: 'mini', corpusPath, dir });
    expect(second.built).toBe(true);
    expect(second.version).not.toBe(first.version);
    expect(await second.index.get('Nat.Coprime')).toBeDefined();
    expect((await readFile(join(dir, 'mini', 'current'), 'utf8')).trim()).toBe(second.version);
  });

  it('rebuilds a damaged stored index instead of failing', async () => {
    const first = await openOrBuildIndex({ library: 'mini', corpusPath, dir });
    await writeFile(join(dir, 'mini', `${first.version}.json`), '{"trunc');
    const again = await openOrBuildIndex({ library: 'mini', corpusPath, dir });
    expect(again.built).toBe(true);
    expect(again.index.size).toBe(21);
  });

  it('serves the current stored index when the corpus file is gone', async () => {
    const first = await openOrBuildIndex({ library: 'mini', corpusPath, dir });
    await rm(corpusPath);
    const again = await openOrBuildIndex({ library: 'mini', corpusPath, dir });
    expect(again).toMatchObject({ built: false, version: first.version });
  });

  it('says what is missing when there is neither corpus nor index', async () => {
    await expect(openOrBuildIndex({ library: 'mini', corpusPath: join(work, 'nope.jsonl'), dir })).rejects.toThrow(
      /corpus for library mini not found at .*nope\.jsonl/,
    );
  });

  it('refuses a library name that is not a plain directory name', async () => {
    await expect(openOrBuildIndex({ library: '../evil', corpusPath, dir })).rejects.toThrow(/library name/);
  });
});

describe('IndexRegistry', () => {
  it('opens lazily, caches, and defaults to the first library', async () => {
    const registry = new IndexRegistry({
      libraries: [
        { name: 'mini', corpusPath },
        { name: 'other', corpusPath },
      ],
      dir,
    });
    expect(registry.defaultLibrary).toBe('mini');
    const [a, b] = await Promise.all([registry.get('mini'), registry.get('mini')]);
    expect(a).toBe(b);
    expect(await registry.get()).toBe(a);
    expect(a.library).toBe('mini');
    expect((await registry.open('mini')).built).toBe(true); // built once, not twice
    // 'other' has not been opened yet.
    expect(await readdir(dir)).toEqual(['mini']);
  });

  it('rejects an unknown library, listing the known ones', async () => {
    const registry = new IndexRegistry({ libraries: [{ name: 'mini', corpusPath }], dir });
    const err = await registry.get('mathlib').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownLibraryError);
    expect((err as Error).message).toBe('unknown library "mathlib"; known libraries: mini');
  });

  it('ready() opens every library', async () => {
    const registry = new IndexRegistry({
      libraries: [
        { name: 'mini', corpusPath },
        { name: 'copy', corpusPath },
      ],
      dir,
    });
    const status = await registry.ready();
    expect(status.map((s) => [s.library, s.built, s.size])).toEqual([
      ['mini', true, 21],
      ['copy', true, 21],
    ]);
    expect((await readdir(dir)).sort()).toEqual(['copy', 'mini']);
  });

  it('retries an open that failed once the cause is fixed', async () => {
    const missing = join(work, 'later.jsonl');
    const registry = new IndexRegistry({ libraries: [{ name: 'later', corpusPath: missing }], dir });
    await expect(registry.get('later')).rejects.toThrow(/not found/);
    await copyFile(MINI, missing);
    expect((await registry.get('later')).size).toBe(21);
  });
});
