// One durable index build: plan (version, size, field statistics), store the corpus chunk by
// chunk (each chunk an activity that heartbeats per batch and resumes from its last heartbeat),
// verify that the store counts exactly the corpus, then move the library's alias. Upserts are
// idempotent (point IDs from version + name), so any retry or replay adds no duplicates.
import { ApplicationFailure, defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import { INDEX_FAILURE, NON_RETRYABLE_TYPES } from '../common/failures';
import type { BuildIndexInput, BuildIndexResult, IndexBuildActivities, IndexBuildProgress } from '../common/index-build';
import { INDEX_BUILD_PROGRESS_QUERY } from '../common/index-build';

export const indexBuildProgressQuery = defineQuery<IndexBuildProgress>(INDEX_BUILD_PROGRESS_QUERY);

const quick = proxyActivities<IndexBuildActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
});

export async function buildIndex(input: BuildIndexInput): Promise<BuildIndexResult> {
  const progress: IndexBuildProgress = { library: input.library, version: input.version, phase: 'planning', done: 0, total: 0 };
  setHandler(indexBuildProgressQuery, () => progress);

  const chunkSize = input.chunkSize ?? 1000;
  const batchSize = input.batchSize ?? 128;
  if (chunkSize < 1 || batchSize < 1)
    throw ApplicationFailure.nonRetryable('chunkSize and batchSize must be at least 1', INDEX_FAILURE.badIndexRequest);
  const storing = proxyActivities<IndexBuildActivities>({
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: input.heartbeatTimeoutMs ?? 30_000,
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  });

  const skipBadLines = input.skipBadLines ?? false;
  const plan = await quick.planIndexBuild({ library: input.library, corpusPath: input.corpusPath, version: input.version, skipBadLines });
  progress.total = plan.expected;
  progress.phase = 'storing';
  progress.startedAt = Date.now(); // workflow time: deterministic
  if (plan.stored === plan.expected) {
    // Everything is there already (a finished build started again): nothing to store.
    progress.done = plan.expected;
  } else {
    for (let from = 0; from < plan.expected; from += chunkSize) {
      const to = Math.min(plan.expected, from + chunkSize);
      await storing.storeIndexChunk({
        library: input.library,
        version: plan.version,
        corpusPath: input.corpusPath,
        from,
        to,
        batchSize,
        stats: plan.stats,
        skipBadLines,
      });
      progress.done = to;
    }
  }

  progress.phase = 'verifying';
  const { count } = await quick.completeIndexBuild({ version: plan.version });
  let promoted = false;
  if (input.promote !== false) {
    progress.phase = 'promoting';
    await quick.promoteIndex({ library: input.library, version: plan.version });
    promoted = true;
  }
  progress.phase = 'done';
  return { version: plan.version, count, promoted };
}
