// Test helpers for sweeps: a sweep spec over the fixture benchmark, started on a test stack's
// queues, and waiting on its progress.
import { fileURLToPath } from 'node:url';
import type { SweepProgress } from '../../common/sweep';
import { getSweepProgress, startSweep, type StartSweepOptions } from '../../client/sweeps';
import { loadBenchmarks } from '../../engines/benchmarks/load';
import type { NamedConfig, SweepSpec } from '../../engines/sweeps/sweep-file';
import { FIXTURE_LIBRARY, type TestStack } from './stack';

export const MINI_BENCHMARK = fileURLToPath(new URL('../fixtures/benchmarks/mini.dev.jsonl', import.meta.url));

export function miniSpec(overrides: Partial<SweepSpec> & { configurations?: NamedConfig[] } = {}): SweepSpec {
  return {
    benchmarks: [{ path: MINI_BENCHMARK, format: 'rautoformalizer' }],
    library: FIXTURE_LIBRARY,
    samples: 1,
    window: 4,
    maxAttempts: 2,
    leaveOut: 'item',
    configurations: [
      { name: 'drift', config: {} },
      { name: 'no-retrieval', config: { retrieval: 'none', repairRounds: 0 } },
    ],
    ...overrides,
  };
}

export async function startOnStack(stack: TestStack, spec: SweepSpec, options: StartSweepOptions = {}) {
  const items = await loadBenchmarks(spec.benchmarks);
  // A stack with provider queues hands its runs the role → provider map (as the CLI does from config).
  const llm = stack.runLlm.providers ? { llm: stack.runLlm } : {};
  return startSweep(stack.client, stack.results, spec, items, {
    taskQueue: stack.mainQueue,
    leanTaskQueue: stack.leanQueue,
    ...llm,
    ...options,
  });
}

export async function progressOf(stack: TestStack, id: string): Promise<SweepProgress> {
  const p = await getSweepProgress(stack.client, stack.results, id);
  if (!p) throw new Error(`no sweep ${id}`);
  return p;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
