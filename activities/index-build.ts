// The activities of the durable index build (workflow `buildIndex`). They work on the registry's
// store with the registry's embedder, so the version a worker builds is the one it searches.
import { INDEX_FAILURE } from '../common/failures';
import type { IndexBuildActivities, StoreIndexHeartbeat } from '../common/index-build';
import type { IndexRegistry } from '../engines/retrieval/index-registry';
import { CorpusLineError } from '../engines/retrieval/corpus';
import { completeVersion, IncompleteBuildError, planBuild, promoteVersion, storeRange } from '../engines/retrieval/stores/build';
import { activityFailure, mapEngineErrors, toTemporalFailure } from './failures';
import { resumedDetails, withHeartbeat } from './heartbeat';

/** A corpus that cannot be read will not get better by retrying: say which line, and what to do. */
async function readingCorpus<T>(corpusPath: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof CorpusLineError) {
      throw activityFailure(INDEX_FAILURE.badCorpus, `${err.message} (fix the line, or build with --skip-bad-lines to skip bad lines)`);
    }
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw activityFailure(INDEX_FAILURE.badCorpus, `corpus file ${corpusPath} does not exist on this worker`);
    }
    // Anything else keeps its type (an embedder's error through the one map).
    throw toTemporalFailure(err);
  }
}

export function createIndexBuildActivities(registry: IndexRegistry): IndexBuildActivities {
  const store = registry.store;
  return {
    async planIndexBuild({ library, corpusPath, version, skipBadLines }) {
      const plan = await readingCorpus(corpusPath, () => planBuild({ library, corpusPath, embedder: registry.embedder, skipBadLines }));
      if (plan.version !== version) {
        throw activityFailure(
          INDEX_FAILURE.corpusChanged,
          `the build asked for version ${version}, but ${corpusPath} with ${registry.embedder ? `embedder ${registry.embedder.id}` : 'no embedder'} on this worker gives ${plan.version} ` +
            '(the corpus changed since the build started, or the worker is configured with another embedder); start the build again',
        );
      }
      await store.createVersion(plan); // a no-op when it exists (a restarted build)
      const info = (await store.getVersion(version))!;
      const stored = await store.count(version);
      return { version, expected: info.expected, stored, complete: Boolean(info.completedAt), stats: info.stats };
    },

    async storeIndexChunk(input) {
      // A retry of this chunk resumes after the last batch it reported; redoing a batch would
      // be harmless (idempotent upserts) but slow with a real embedder.
      const resumed = resumedDetails<StoreIndexHeartbeat>();
      let next = resumed && resumed.from === input.from && resumed.to === input.to ? Math.max(input.from, resumed.next) : input.from;
      const details = (): StoreIndexHeartbeat => ({ next, from: input.from, to: input.to });
      let stored = 0;
      await withHeartbeat(
        async (signal, beat) => {
          while (next < input.to) {
            const end = Math.min(input.to, next + input.batchSize);
            stored += await readingCorpus(input.corpusPath, () =>
              mapEngineErrors(
                storeRange(
                  store,
                  registry.embedder,
                  {
                    version: input.version,
                    corpusPath: input.corpusPath,
                    from: next,
                    to: end,
                    stats: input.stats,
                    skipBadLines: input.skipBadLines,
                  },
                  signal,
                ),
              ),
            );
            next = end;
            beat?.();
          }
        },
        { details },
      );
      return { stored };
    },

    async completeIndexBuild({ version }) {
      try {
        const info = await completeVersion(store, version);
        return { count: info.expected };
      } catch (err) {
        if (err instanceof IncompleteBuildError) throw activityFailure(INDEX_FAILURE.incompleteBuild, err.message);
        throw toTemporalFailure(err);
      }
    },

    async promoteIndex({ library, version }) {
      await promoteVersion(store, library, version);
    },
  };
}
