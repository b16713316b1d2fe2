// A run reads one index version from retrieve to the end: a promotion between retrieve and
// illustrate must not mix versions within the run.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities';
import { createLlmClient } from '../../engines/llm/client';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { buildInProcess } from '../../engines/retrieval/stores/build';

const MINI = join(resolve(__dirname, '../fixtures/corpus'), 'mini.jsonl');
let work: string;
let registry: IndexRegistry;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'driftline-pin-'));
});
afterEach(async () => {
  await registry?.close();
  await rm(work, { recursive: true, force: true });
});

describe('index version within one run', () => {
  it('retrieve returns the version it searched, and illustrate uses it even after a promotion', async () => {
    const corpusPath = join(work, 'mini.jsonl');
    await writeFile(corpusPath, await readFile(MINI, 'utf8'));
    registry = new IndexRegistry({ libraries: [{ name: 'mini', corpusPath }], dir: join(work, 'indexes') });
    const activities = createActivities({ llm: createLlmClient(null), indexes: registry });

    const statement = 'Every prime number p is at least 2.';
    const retrieved = await activities.retrieve({
      library: 'mini',
      statement,
      subqueries: [],
      mode: 'monolithic',
      topK: 3,
      exclude: [],
      gold: [],
    });
    const first = await registry.store.getAlias('mini');
    expect(retrieved.indexVersion).toBe(first);
    expect(retrieved.premises.length).toBeGreaterThan(0);

    // A new version without any theorem is built and promoted between the two stages.
    const bare = join(work, 'no-theorems.jsonl');
    const lines = (await readFile(MINI, 'utf8')).split('\n').filter((l) => l.trim() && !/\b(theorem|lemma)$/.test(JSON.parse(l).kind));
    await writeFile(bare, lines.join('\n') + '\n');
    const second = await buildInProcess({ library: 'mini', corpusPath: bare, store: registry.store });
    expect(await registry.store.getAlias('mini')).toBe(second.version);
    expect(second.version).not.toBe(first);

    const premises = retrieved.premises.map((p) => p.name);
    const pinned = await activities.illustrate({
      library: 'mini',
      statement,
      premises,
      m: 3,
      exclude: [],
      indexVersion: retrieved.indexVersion,
    });
    expect(pinned.length).toBeGreaterThan(0); // the theorems of the version retrieve searched
    // Without a pinned version the current alias (no theorems) answers: the mix the pin prevents.
    expect(await activities.illustrate({ library: 'mini', statement, premises, m: 3, exclude: [] })).toEqual([]);
  });
});
