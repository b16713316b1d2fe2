// The activities of the durable index build (workflow `buildIndex`). They work on the registry's
// store with the registry's embedder, so the version a worker builds is the one it searches.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { IndexBuildActivities, StoreIndexHeartbeat } from '../common/index-build';
import type { IndexRegistry } from '../engines/retrieval/index-registry';
import { CorpusLineError } from '../engines/retrieval/corpus';
import { completeVersion, IncompleteBuildError, planBuild, promoteVersion, storeRange } from '../engines/retrieval/stores/build';

/** A corpus that cannot be read will not get better by retrying: say which line, and what to do. */
async function readingCorpus<T>(corpusPath: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof CorpusLineError) {
      throw ApplicationFailure.nonRetryable(`${err.message} (fix the line, or build with --skip-bad-lines to skip bad lines)`, 'BadCorpus');
    }
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw ApplicationFailure.nonRetryable(`corpus file ${corpusPath} does not exist on this worker`, 'BadCorpus');
    }
    throw err;
  }
}

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called directly (unit tests)
  }
}

export function createIndexBuildActivities(registry: IndexRegistry): IndexBuildActivities {
  const store = registry.store;
  return {
    async planIndexBuild({ library, corpusPath, version, skipBadLines }) {
      const plan = await readingCorpus(corpusPath, () => planBuild({ library, corpusPath, embedder: registry.embedder, skipBadLines }));
      if (plan.version !== version) {
        throw ApplicationFailure.nonRetryable(
          `the build asked for version ${version}, but ${corpusPath} with ${registry.embedder ? `embedder ${registry.embedder.id}` : 'no embedder'} on this worker gives ${plan.version} ` +
            '(the corpus changed since the build started, or the worker is configured with another embedder); start the build again',
          'CorpusChanged',
        );
      }
      await store.createVersion(plan); // a no-op when it exists (a restarted build)
      const info = (await store.getVersion(version))!;
      const stored = await store.count(version);
      return { version, expected: info.expected, stored, complete: Boolean(info.completedAt), stats: info.stats };
    },

    async storeIndexChunk(input) {
      const ctx = activityContext();
      // A retry of this chunk resumes after the last batch it reported; redoing a batch would
      // be harmless (idempotent upserts) but slow with a real embedder.
      const resumed = ctx?.info.heartbeatDetails as StoreIndexHeartbeat | undefined;
      let next = resumed && resumed.from === input.from && resumed.to === input.to ? Math.max(input.from, resumed.next) : input.from;
      const details = (): StoreIndexHeartbeat => ({ next, from: input.from, to: input.to });
      ctx?.heartbeat(details());
      const timer = ctx ? setInterval(() => ctx.heartbeat(details()), 5_000) : undefined;
      let stored = 0;
      try {
        while (next < input.to) {
          const end = Math.min(input.to, next + input.batchSize);
          stored += await readingCorpus(input.corpusPath, () =>
            storeRange(
              store,
              registry.embedder,
              { version: input.version, corpusPath: input.corpusPath, from: next, to: end, stats: input.stats, skipBadLines: input.skipBadLines },
              ctx?.cancellationSignal,
            ),
          );
          next = end;
          ctx?.heartbeat(details());
        }
      } finally {
        if (timer) clearInterval(timer);
      }
      return { stored };
    },

    async completeIndexBuild({ version }) {
      try {
        const info = await completeVersion(store, version);
        return { count: info.expected };
      } catch (err) {
        if (err instanceof IncompleteBuildError) throw ApplicationFailure.nonRetryable(err.message, 'IncompleteBuild');
        throw err;
      }
    },

    async promoteIndex({ library, version }) {
      await promoteVersion(store, library, version);
    },
  };
}
