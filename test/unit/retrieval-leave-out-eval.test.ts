// `driftline eval retrieval --leave-out item|file` through the service's store path, on our own
// small library (test/fixtures/corpus/leave-out.jsonl).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { evalRetrieval, type EvalRetrievalOptions } from '../../bin/eval-command';

const CORPUS = resolve(__dirname, '../fixtures/corpus/leave-out.jsonl');
let dir: string;
let benchmark: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-leave-out-'));
  benchmark = join(dir, 'bench.jsonl');
  const items = [
    {
      full_name: 'Lib.cloud_mono',
      informal_stmt: 'The mem cloud is monotone; the cloud of the empty set is empty.',
      mathlib_dependencies: ['Lib.Params', 'Lib.cloud', 'Lib.Tangle'],
    },
  ];
  writeFileSync(benchmark, items.map((i) => JSON.stringify(i)).join('\n') + '\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cfg = () => loadConfig({ env: { DRIFTLINE_LIBRARIES: `lib=${CORPUS}`, DRIFTLINE_DATA_DIR: join(dir, 'data') } });
const opts = (o: Partial<EvalRetrievalOptions>): EvalRetrievalOptions => ({
  benchmark,
  library: 'lib',
  k: '1,2',
  mode: 'monolithic',
  retriever: 'auto',
  json: true,
  ...o,
});

describe('driftline eval retrieval --leave-out', () => {
  it('keeps the JSON object exactly {results} unless the baseline is asked for', async () => {
    const out = JSON.parse(await evalRetrieval(cfg(), opts({ leaveOut: 'file' })));
    expect(Object.keys(out)).toEqual(['results']);
    const withBaseline = JSON.parse(await evalRetrieval(cfg(), opts({ leaveOut: 'file', baseline: true })));
    expect(Object.keys(withBaseline)).toEqual(['results', 'baseline']);
    // Most used with the file hidden: Lib.Params (2 theorems), then Lib.cloud (1): both gold.
    const [b1, b2] = withBaseline.baseline;
    expect(b1).toMatchObject({ k: 1, precision: 100, f1: 50 });
    expect(b1.recall).toBeCloseTo(100 / 3, 10);
    expect(b2).toMatchObject({ k: 2, precision: 100, f1: 80 });
    expect(b2.recall).toBeCloseTo(200 / 3, 10);
  });

  it("measures differently when the theorems of the item's file are hidden, and says which policy ran", async () => {
    // The words match the item's siblings (mem_cloud, cloud_empty). Under `item` they vote for
    // the premises they share with it, and the top 2 is Lib.cloud, Lib.Params, both gold. Under
    // `file` they do not vote: Lib.near (not gold) takes second place. Same figures through the
    // store and in memory.
    for (const inMemory of [false, true]) {
      // Without the definitions' votes, which read no theorem (so no policy changes them).
      const item = JSON.parse(await evalRetrieval(cfg(), opts({ leaveOut: 'item', inMemory, definitions: false })));
      const file = JSON.parse(await evalRetrieval(cfg(), opts({ leaveOut: 'file', inMemory, definitions: false })));
      expect(item.results[1]).toMatchObject({ k: 2, precision: 100 });
      expect(file.results[1]).toMatchObject({ k: 2, precision: 50 });
    }
    const text = await evalRetrieval(cfg(), opts({ json: false, leaveOut: 'file' }));
    expect(text).toMatch(/leave-out: file \(the item and every theorem of its source file hidden/);
    expect(text).toMatch(
      /Query-blind baseline, same leave-out: the most-used premises first \(the library's most used: Lib\.Params, Lib\.cloud, Lib\.near\)/,
    );
    expect(await evalRetrieval(cfg(), opts({ json: false }))).toMatch(/leave-out: item \(only the item's own declaration hidden\)/);
  });
});
