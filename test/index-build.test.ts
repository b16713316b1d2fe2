// The durable index build on the real Temporal dev server: a build through the workflow while
// searches run (they see the old version until promotion, then the new one, never a mix), a
// build started again (same ID, nothing stored twice), and a worker process killed mid-build
// and restarted (the build finishes with exactly one point per declaration).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../activities';
import { createLlmClient } from '../engines/llm/client';
import { IndexRegistry } from '../engines/retrieval/index-registry';
import { versionForCorpus } from '../engines/retrieval/stores/build';
import { EmbeddedStore } from '../engines/retrieval/stores/embedded';
import {
  INDEX_BUILD_PROGRESS_QUERY,
  indexBuildWorkflowId,
  type BuildIndexInput,
  type BuildIndexResult,
  type IndexBuildProgress,
} from '../common/index-build';
import { MAIN_TASK_QUEUE } from '../common/types';
import { createMainWorker } from '../infra/workers';
import { FIXTURE_CORPUS, startTemporal, workflowBundle } from './helpers/stack';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
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
    const bad = fileURLToPath(new URL('./fixtures/corpus/bad.jsonl', import.meta.url));
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
      const error = await failing.result().then(() => undefined, (err: Error) => err);
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

    const seen: ('old' | 'new' | 'mix' | 'none')[] = [];
    const run = worker.runUntil(async () => {
      const handle = await env.client.workflow.start('buildIndex', { taskQueue, workflowId, args: [input] });
      let finished = false;
      const result = handle.result().finally(() => (finished = true)) as Promise<BuildIndexResult>;
      let midBuild = 0;
      while (!finished) {
        const hits = await (await registry.get('mini')).searchPremises('a prime number p and the integers modulo p', 5);
        const fresh = hits.filter((h) => h.decl.name.startsWith('V2.')).length;
        seen.push(hits.length === 0 ? 'none' : fresh === 0 ? 'old' : fresh === hits.length ? 'new' : 'mix');
        const p = await handle.query<IndexBuildProgress>(INDEX_BUILD_PROGRESS_QUERY).catch(() => undefined);
        if (p?.phase === 'storing' && p.done > 0 && p.done < p.total) midBuild++;
      }
      for (let i = 0; i < 3; i++) {
        const hits = await (await registry.get('mini')).searchPremises('a prime number p and the integers modulo p', 5);
        seen.push(hits.every((h) => h.decl.name.startsWith('V2.')) ? 'new' : 'mix');
      }
      const progress = await handle.query<IndexBuildProgress>(INDEX_BUILD_PROGRESS_QUERY);
      return { result: await result, midBuild, progress };
    });
    const { result, midBuild, progress } = await run;

    expect(result).toEqual({ version, count: 21, promoted: true });
    expect(progress).toMatchObject({ phase: 'done', done: 21, total: 21, version });
    expect(midBuild).toBeGreaterThan(0); // searches really ran while the new version was half stored
    expect(seen).not.toContain('mix');
    expect(seen).not.toContain('none');
    expect(seen.join(' ')).toMatch(/^(old )+(new ?)+$/);
    expect(await store.getAlias('mini')).toBe(version);
    expect((await activityRuns(workflowId)).filter((a) => a === 'storeIndexChunk')).toHaveLength(7);

    // The same build started again (same workflow ID): it finds every point stored, stores
    // nothing, verifies and promotes again.
    const again = await (await newWorker()).runUntil(async () => {
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

  it('finishes without duplicates after its worker process is killed mid-build and restarted', { timeout: 240_000 }, async () => {
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
    const dataDir = join(work, 'killed');
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      DRIFTLINE_LIBRARIES: `synth=${corpus}`,
      DRIFTLINE_DATA_DIR: dataDir,
      DRIFTLINE_STORE: 'embedded',
      DRIFTLINE_EMBEDDER: 'none',
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
    const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

    const { version } = await versionForCorpus('synth', corpus, undefined);
    const workflowId = indexBuildWorkflowId('synth', version);
    const handle = await env.client.workflow.start('buildIndex', {
      taskQueue: MAIN_TASK_QUEUE,
      workflowId,
      args: [{ library: 'synth', corpusPath: corpus, version, chunkSize: 3000, batchSize: 100, heartbeatTimeoutMs: 3000 } satisfies BuildIndexInput],
    });

    const store = new EmbeddedStore(join(dataDir, 'indexes', 'embedded'));
    let first: ChildProcess | undefined = startWorker();
    let second: ChildProcess | undefined;
    try {
      // Wait until the build is half-way through its first chunk (of two), then kill the worker
      // without warning: the chunk in flight must be retried and resume, not start over.
      const deadline = Date.now() + 120_000;
      let stored = 0;
      for (;;) {
        stored = (await store.getVersion(version)) ? await store.count(version).catch(() => 0) : 0;
        if (stored >= 1500) break;
        if (Date.now() > deadline) throw new Error(`the build did not get going (stored ${stored}):\n${log}`);
        if (first.exitCode !== null) throw new Error(`the worker exited early:\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      first.kill('SIGKILL');
      await exited(first);
      first = undefined;
      const atKill = await store.count(version);
      expect(atKill).toBeLessThan(n);
      expect((await handle.describe()).status.name).toBe('RUNNING'); // (no worker to answer queries now)

      second = startWorker();
      const result = (await handle.result()) as BuildIndexResult;
      expect(result).toEqual({ version, count: n, promoted: true });
    } finally {
      first?.kill('SIGKILL');
      second?.kill('SIGTERM');
      if (second) await exited(second);
    }
    expect(await store.count(version)).toBe(n);
    expect((await store.getVersion(version))?.completedAt).toBeTruthy();
    expect(await store.getAlias('synth')).toBe(version);
    // One point per name: every declaration is found by name, none twice.
    const names = lines.map((l) => (JSON.parse(l) as { name: string }).name);
    expect((await store.get(version, names)).size).toBe(n);
    // The killed chunk was retried (attempt 2 or later) by the new worker.
    const history = await handle.fetchHistory();
    const retried = (history.events ?? []).some((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
    expect(retried).toBe(true);
    await store.close();
  });
});
