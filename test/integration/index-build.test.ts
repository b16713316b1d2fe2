// The durable index build on the real Temporal dev server: a build through the workflow while
// searches run concurrently (each one timed against the build's history: the old version
// until promotion, then the new one, never a mix or an incomplete version), a build started
// again (same ID, nothing stored twice), and a worker process killed mid-chunk and restarted
// (the build resumes from its heartbeat: one point per declaration, no finished batch embedded
// again).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultPayloadConverter, WorkflowIdConflictPolicy } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities';
import { createLlmClient } from '../../engines/llm/client';
import { IndexRegistry } from '../../engines/retrieval/index-registry';
import { versionForCorpus } from '../../engines/retrieval/stores/build';
import { EmbeddedStore } from '../../engines/retrieval/stores/embedded';
import {
  INDEX_BUILD_PROGRESS_QUERY,
  indexBuildWorkflowId,
  type BuildIndexInput,
  type BuildIndexResult,
  type IndexBuildProgress,
  type StoreIndexHeartbeat,
} from '../../common/index-build';
import { MAIN_TASK_QUEUE } from '../../common/activities';
import { createMainWorker } from '../../infra/workers';
import { FIXTURE_CORPUS, startTemporal, workflowBundle, workflowBundleFile } from '../helpers/stack';
import { FAKE_EMBEDDING_DIMENSIONS, startFakeOpenAI } from '../fakes/openai-server';
import { activityRuns as activityRunsOf } from '../helpers/history';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let env: TestWorkflowEnvironment;
let work: string;

beforeAll(async () => {
  env = await startTemporal();
  work = await mkdtemp(join(tmpdir(), 'driftline-build-'));
});
afterAll(async () => {
  await env?.teardown();
  await rm(work, { recursive: true, force: true });
});

async function activityRuns(workflowId: string, runId?: string): Promise<string[]> {
  const history = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
}

describe('buildIndex workflow', () => {
  it('fails at once on a corpus line that does not parse, naming it; with skipBadLines it builds the rest', async () => {
    const bad = fileURLToPath(new URL('../fixtures/corpus/bad.jsonl', import.meta.url));
    const store = new EmbeddedStore(join(work, 'bad-corpus-store'));
    const registry = new IndexRegistry({ libraries: [{ name: 'bad', corpusPath: bad }], store });
    const taskQueue = 'index-build-bad-corpus';
    const worker = await createMainWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      activities: createActivities({ llm: createLlmClient(null), indexes: registry }),
      taskQueue,
      workflowBundle: await workflowBundle(),
    });
    const { version } = await versionForCorpus('bad', bad, undefined);
    const outcome = await worker.runUntil(async () => {
      const failing = await env.client.workflow.start('buildIndex', {
        taskQueue,
        workflowId: `${indexBuildWorkflowId('bad', version)}/strict`,
        args: [{ library: 'bad', corpusPath: bad, version } satisfies BuildIndexInput],
      });
      const error = await failing.result().then(
        () => undefined,
        (err: Error) => err,
      );
      const lenient = await env.client.workflow.start('buildIndex', {
        taskQueue,
        workflowId: `${indexBuildWorkflowId('bad', version)}/lenient`,
        args: [{ library: 'bad', corpusPath: bad, version, skipBadLines: true } satisfies BuildIndexInput],
      });
      return { error, history: await failing.fetchHistory(), result: (await lenient.result()) as BuildIndexResult };
    });
    const cause = (outcome.error as { cause?: { cause?: Error } } | undefined)?.cause?.cause;
    expect(cause?.message).toMatch(/bad\.jsonl:3: .*--skip-bad-lines/);
    // Not retried: bad input does not get better.
    const attempts = (outcome.history.events ?? []).flatMap((e) => e.activityTaskStartedEventAttributes?.attempt ?? []);
    expect(attempts).toEqual([1]);
    // Line 3 is not JSON and line 4 lacks a signature: the three good declarations remain.
    expect(outcome.result).toEqual({ version, count: 3, promoted: true });
    await store.close();
  });

  it('switches searches from the old version to the new one atomically, at promotion', async () => {
    const v1 = FIXTURE_CORPUS;
    // The new corpus: the same declarations under new names, so every hit says which version answered.
    const lines = (await readFile(v1, 'utf8')).split('\n').filter((l) => l.trim());
    const renamed = lines.map((l) => {
      const d = JSON.parse(l) as { name: string; uses?: string[] };
      return JSON.stringify({ ...d, name: `V2.${d.name}`, uses: (d.uses ?? []).map((u) => `V2.${u}`) });
    });
    const v2 = join(work, 'mini-v2.jsonl');
    await writeFile(v2, renamed.join('\n') + '\n');

    const store = new EmbeddedStore(join(work, 'alias-store'));
    const registry = new IndexRegistry({ libraries: [{ name: 'mini', corpusPath: v1 }], store });
    const old = await registry.open('mini');
    expect(old.built).toBe(true);

    const taskQueue = 'index-build-alias';
    const newWorker = async () =>
      createMainWorker({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        activities: createActivities({ llm: createLlmClient(null), indexes: registry }),
        taskQueue,
        workflowBundle: await workflowBundle(),
      });
    const worker = await newWorker();
    const { version } = await versionForCorpus('mini', v2, undefined);
    const workflowId = indexBuildWorkflowId('mini', version);
    const input: BuildIndexInput = { library: 'mini', corpusPath: v2, version, chunkSize: 3, batchSize: 2 };

    // Searches run concurrently with the build, several at a time; each records when it ran
    // and which version answered (every name of the new corpus starts with V2.).
    type Answer = 'old' | 'new' | 'mix' | 'none';
    const searches: { start: number; end: number; answer: Answer }[] = [];
    const search = async (): Promise<void> => {
      const start = Date.now();
      const hits = await (await registry.get('mini')).searchPremises('a prime number p and the integers modulo p', 5);
      const fresh = hits.filter((h) => h.decl.name.startsWith('V2.')).length;
      searches.push({
        start,
        end: Date.now(),
        answer: hits.length === 0 ? 'none' : fresh === 0 ? 'old' : fresh === hits.length ? 'new' : 'mix',
      });
    };
    const run = worker.runUntil(async () => {
      const handle = await env.client.workflow.start('buildIndex', { taskQueue, workflowId, args: [input] });
      let finished = false;
      const result = handle.result().finally(() => (finished = true)) as Promise<BuildIndexResult>;
      const searcher = async () => {
        while (!finished) await search();
        for (let i = 0; i < 3; i++) await search(); // after promotion
      };
      await Promise.all([searcher(), searcher(), searcher(), searcher()]);
      const progress = await handle.query<IndexBuildProgress>(INDEX_BUILD_PROGRESS_QUERY);
      return { result: await result, progress };
    });
    const { result, progress } = await run;

    expect(result).toEqual({ version, count: 21, promoted: true });
    expect(progress).toMatchObject({ phase: 'done', done: 21, total: 21, version });
    const runs = await activityRunsOf(env.client, workflowId);
    const chunks = runs.filter((r) => r.type === 'storeIndexChunk');
    expect(chunks).toHaveLength(7);
    const complete = runs.find((r) => r.type === 'completeIndexBuild')!;
    const promote = runs.find((r) => r.type === 'promoteIndex')!;
    expect(promote.startedAt).toBeGreaterThanOrEqual(complete.closedAt!);

    expect(searches.filter((x) => x.answer === 'mix' || x.answer === 'none')).toEqual([]);
    // Searches really ran while the new version was half stored, and they saw the old one.
    const duringStoring = searches.filter((x) => x.start >= chunks[0]!.startedAt! && x.end <= chunks.at(-1)!.closedAt!);
    expect(duringStoring.length).toBeGreaterThan(0);
    // Before promotion only the old version answers: no search that ended before the promotion
    // began saw the new one.
    const beforePromotion = searches.filter((x) => x.end < promote.startedAt!);
    expect(beforePromotion.length).toBeGreaterThan(0);
    expect(beforePromotion.every((x) => x.answer === 'old')).toBe(true);
    // After it only the new one: every search that began once the promotion was done.
    const afterPromotion = searches.filter((x) => x.start > promote.closedAt!);
    expect(afterPromotion.length).toBeGreaterThan(0);
    expect(afterPromotion.every((x) => x.answer === 'new')).toBe(true);
    // Never an incomplete version: whoever saw the new one was still searching after it was
    // stored in full and verified.
    for (const x of searches.filter((y) => y.answer === 'new')) expect(x.end).toBeGreaterThanOrEqual(complete.closedAt!);
    expect(await store.getAlias('mini')).toBe(version);

    // The same build started again (same workflow ID): it finds every point stored, stores
    // nothing, verifies and promotes again.
    const again = await (
      await newWorker()
    ).runUntil(async () => {
      const handle = await env.client.workflow.start('buildIndex', {
        taskQueue,
        workflowId,
        args: [input],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      });
      return { result: (await handle.result()) as BuildIndexResult, runId: handle.firstExecutionRunId };
    });
    expect(again.result).toEqual({ version, count: 21, promoted: true });
    expect(await activityRuns(workflowId, again.runId)).toEqual(['planIndexBuild', 'completeIndexBuild', 'promoteIndex']);
    expect(await store.count(version)).toBe(21);
    await registry.close();
  });

  it(
    'resumes after its worker process is killed mid-chunk: nothing stored twice, no finished batch embedded again',
    { timeout: 240_000 },
    async () => {
      const n = 6000;
      const corpus = join(work, 'synthetic.jsonl');
      const lines: string[] = [];
      for (let i = 0; i < n; i++) {
        const theorem = i % 3 === 0;
        lines.push(
          JSON.stringify({
            name: `Synth.Module${i % 50}.${theorem ? 'lemma' : 'def'}_${i}`,
            kind: theorem ? 'theorem' : 'def',
            signature: theorem ? `theorem Synth.lemma_${i} (n : ℕ) : foo${i % 97} n = bar${i % 89} n` : `def Synth.def_${i} (n : ℕ) : ℕ`,
            docstring: `Synthetic declaration number ${i} about widget ${i % 113}.`,
            uses: theorem ? [`Synth.Module${(i + 1) % 50}.def_${i + 1}`] : [],
          }),
        );
      }
      await writeFile(corpus, lines.join('\n') + '\n');
      // Dense vectors from the fake OpenAI server: every document it is asked to embed is counted.
      const llm = await startFakeOpenAI();
      // Every batch takes a while: the SDK sends heartbeat details at most every 0.8 × the
      // heartbeat timeout (2.4 s here), and a chunk embedded faster than that never shows Temporal
      // a position half-way through (on a quiet machine the test then waited in vain).
      llm.scriptEmbeddings(...Array.from({ length: 200 }, () => ({ embed: true as const, delayMs: 150 })));
      const embedded = new Map<number, number>();
      const embeddedDocuments = () => {
        embedded.clear();
        for (const request of llm.embeddingRequests) {
          for (const text of request.input) {
            const i = Number(/^Synth\.Module\d+\.(?:lemma|def)_(\d+)/.exec(text)?.[1] ?? NaN);
            if (!Number.isNaN(i)) embedded.set(i, (embedded.get(i) ?? 0) + 1);
          }
        }
        return embedded;
      };
      const dataDir = join(work, 'killed');
      const childEnv: NodeJS.ProcessEnv = {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_NAMESPACE: env.namespace ?? 'default',
        DRIFTLINE_LIBRARIES: `synth=${corpus}`,
        DRIFTLINE_DATA_DIR: dataDir,
        DRIFTLINE_STORE: 'embedded',
        DRIFTLINE_EMBEDDER: 'openai',
        DRIFTLINE_EMBEDDING_MODEL: 'fake-embed',
        DRIFTLINE_EMBEDDING_DIMENSIONS: String(FAKE_EMBEDDING_DIMENSIONS),
        DRIFTLINE_EMBEDDINGS_BASE_URL: llm.url,
        DRIFTLINE_EMBEDDINGS_API_KEY: 'test-key',
        DRIFTLINE_WORKFLOW_BUNDLE: await workflowBundleFile(work),
        DRIFTLINE_CONFIG: join(work, 'no-config.json'),
      };
      await writeFile(childEnv.DRIFTLINE_CONFIG!, '{}');
      let log = '';
      const startWorker = (): ChildProcess => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin/cli.ts'), 'worker', '--queue', 'main'], {
          cwd: ROOT,
          env: childEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
        child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
        return child;
      };
      const exited = (c: ChildProcess) =>
        new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

      const { version } = await versionForCorpus('synth', corpus, `openai:fake-embed@${FAKE_EMBEDDING_DIMENSIONS}`);
      const workflowId = indexBuildWorkflowId('synth', version);
      const handle = await env.client.workflow.start('buildIndex', {
        taskQueue: MAIN_TASK_QUEUE,
        workflowId,
        args: [
          {
            library: 'synth',
            corpusPath: corpus,
            version,
            chunkSize: 3000,
            batchSize: 100,
            heartbeatTimeoutMs: 3000,
          } satisfies BuildIndexInput,
        ],
      });
      /** Where the running chunk's last heartbeat says it got to, as Temporal has it. */
      const reported = async (): Promise<StoreIndexHeartbeat | undefined> => {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        const details = pending.find((a) => a.activityType?.name === 'storeIndexChunk')?.heartbeatDetails?.payloads?.[0];
        return details ? defaultPayloadConverter.fromPayload<StoreIndexHeartbeat>(details) : undefined;
      };

      const store = new EmbeddedStore(join(dataDir, 'indexes', 'embedded'));
      let first: ChildProcess | undefined = startWorker();
      let second: ChildProcess | undefined;
      let resumeFrom: number;
      let killedChunk: StoreIndexHeartbeat;
      try {
        // Wait until Temporal has a heartbeat from half-way through a chunk (either of the two), then
        // kill the worker without warning: the chunk must be retried and resume from there. Under a
        // heavy load a poll can come late and see a chunk's last heartbeat (next = to): not half-way.
        const deadline = Date.now() + 150_000;
        for (;;) {
          const beat = await reported().catch(() => undefined);
          if (beat && beat.next >= beat.from + 1500 && beat.next < beat.to) {
            killedChunk = beat;
            resumeFrom = beat.next;
            break;
          }
          if (Date.now() > deadline) throw new Error(`the build did not get going (${JSON.stringify(beat)}):\n${log}`);
          if (first.exitCode !== null) throw new Error(`the worker exited early:\n${log}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        first.kill('SIGKILL');
        await exited(first);
        first = undefined;
        expect(resumeFrom).toBeLessThan(killedChunk.to);
        expect(await store.count(version)).toBeLessThan(n);
        expect((await handle.describe()).status.name).toBe('RUNNING'); // (no worker to answer queries now)
        // The worker's vector cache would hide a re-embedding from the fake: remove it, so any
        // batch the new attempt redoes is asked of the embeddings server again.
        await rm(join(dataDir, 'cache'), { recursive: true, force: true });

        second = startWorker();
        const result = (await handle.result()) as BuildIndexResult;
        expect(result).toEqual({ version, count: n, promoted: true });
      } finally {
        first?.kill('SIGKILL');
        second?.kill('SIGTERM');
        if (second) await exited(second);
        await llm.close();
      }
      expect(await store.count(version)).toBe(n);
      expect((await store.getVersion(version))?.completedAt).toBeTruthy();
      expect(await store.getAlias('synth')).toBe(version);
      // One point per name: every declaration is found by name, none twice.
      const names = lines.map((l) => (JSON.parse(l) as { name: string }).name);
      expect((await store.get(version, names)).size).toBe(n);
      // The killed chunk was retried (attempt 2 or later) by the new worker...
      const chunkAttempts = (await activityRunsOf(env.client, workflowId))
        .filter((r) => r.type === 'storeIndexChunk')
        .map((r) => r.attempt);
      expect(chunkAttempts[killedChunk.from / 3000]).toBeGreaterThan(1);
      // ...from its heartbeat: what the first attempt had reported done was embedded once, not again.
      const counts = embeddedDocuments();
      const redone = [...Array(resumeFrom).keys()].filter((i) => counts.get(i) !== 1);
      expect(redone).toEqual([]);
      // Every declaration was embedded.
      expect(counts.size).toBe(n);
      await store.close();
    },
  );
});
