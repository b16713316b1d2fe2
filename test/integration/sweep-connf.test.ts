// A sweep over a few real ConNF dev items (the pulled public data) against the fake LLM and fake Lean,
// with the con-nf premise corpus indexed for real, ending in the HTML report.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { SweepProgress } from '../../common/sweep';
import { readSweepFile } from '../../engines/sweeps/sweep-file';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import { startSweep } from '../../client/sweeps';
import { sweepReportInput } from '../../client/sweep-report';
import { writeSweepReport } from '../../engines/report/write-report';
import { createStack, startTemporal, type TestStack } from '../helpers/stack';
import { publicData } from '../helpers/public-data';

const SMOKE = fileURLToPath(new URL('../../sweeps/connf-smoke.json', import.meta.url));

let DATA: string;
let env: TestWorkflowEnvironment;
let stack: TestStack;

beforeAll(async () => {
  DATA = publicData();
  env = await startTemporal();
  stack = await createStack(env, { library: { name: 'connf', corpusPath: join(DATA, 'connf', 'library.jsonl') } });
});

afterAll(async () => {
  await stack?.close();
  await env?.teardown();
});

it('sweeps five ConNF dev items in two configurations and writes the HTML report', async () => {
  // The example file shipped in sweeps/, as a user would start it.
  const spec = await readSweepFile(SMOKE, { dataDir: DATA });
  const items = await loadBenchmarks(spec.benchmarks);
  expect(items.map((i) => i.id)).toHaveLength(5);
  const started = await startSweep(stack.client, stack.results, spec, items, {
    id: 'connf-smoke',
    taskQueue: stack.mainQueue,
    leanTaskQueue: stack.leanQueue,
  });
  const final = await stack.withWorkers(() => stack.client.workflow.getHandle(started.id).result() as Promise<SweepProgress>);
  expect(final).toMatchObject({ status: 'completed', total: 10, done: 10, failed: 0 });

  const runs = await stack.results.runs('connf-smoke');
  expect(runs).toHaveLength(10);
  // Real gold premises from the benchmark, real retrieval over the con-nf corpus, and the item's
  // own declaration never among the premises.
  for (const r of runs) {
    expect(r.goldPremises.length).toBeGreaterThan(0);
    expect(r.premises).not.toContain(r.item);
    expect(r.tags).toMatchObject({ split: 'dev', source: 'Con-NF' });
  }
  expect(runs.filter((r) => r.config === 'monolithic-top5').every((r) => r.premises.length === 5)).toBe(true);

  const out = mkdtempSync(join(tmpdir(), 'driftline-connf-report-'));
  const input = (await sweepReportInput(stack.results, 'connf-smoke', {
    status: final.status,
    temporalUi: { base: 'http://127.0.0.1:8233', namespace: stack.client.options.namespace },
  }))!;
  await writeSweepReport(out, input);
  expect(existsSync(join(out, 'index.html'))).toBe(true);
  const html = readFileSync(join(out, 'index.html'), 'utf8');
  expect(html).toContain('<svg');
  expect(html).toContain('monolithic-top5');
  expect(html).toContain(items[0]!.id);
  expect(html).toContain(encodeURIComponent('connf-smoke/drift/'));
  // Offline: nothing is fetched from elsewhere.
  expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="https?:/);
}, 300_000);
