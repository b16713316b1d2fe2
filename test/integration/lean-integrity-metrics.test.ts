// Where operators see a hole found (decision 0017): a forged REPL reply and a screen/Lean parse
// disagreement, through the real pool against the fake REPL, each a pino warning naming its trust
// domain, a count on the Lean worker's Prometheus endpoint (scraped over HTTP as an operator
// would), and a count in the data directory that the API's /readyz reports. Its own file: the
// Temporal runtime (and its exporter) is installed once per process.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { createReadinessCheck } from '../../api/readiness';
import { ReadinessSchema } from '../../api/schemas';
import { leanIntegrityFile, readLeanIntegrity, recordLeanIntegrity } from '../../engines/lean/integrity-status-file';
import { ReplPool } from '../../engines/lean/repl-pool';
import { leanIntegrityRecorder, LEAN_INTEGRITY_METRIC } from '../../infra/lean-integrity';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The counter's samples on the endpoint, by `kind`/`during` label, summed over other labels. */
function integritySamples(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(LEAN_INTEGRITY_METRIC)) continue;
    const kind = /kind="([^"]+)"/.exec(line)?.[1];
    const during = /during="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.trim().split(/\s+/).at(-1));
    if (kind && during) out[`${kind}/${during}`] = (out[`${kind}/${during}`] ?? 0) + value;
  }
  return out;
}

let fake: FakeRepl | undefined;
let pool: ReplPool | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'driftline-integrity-'));
afterAll(async () => {
  await pool?.close();
  fake?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

// Temporal answers and both queues have pollers: only the Lean integrity part is under test.
const healthyTemporal = {
  workflowService: { getSystemInfo: async () => ({}), describeTaskQueue: async () => ({ pollers: [{}] }) },
} as unknown as Client;

describe('Lean integrity events for operators', () => {
  it('are warned with their trust domain and counted on the Prometheus endpoint', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: address } } } });
    const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
    const log = {
      info: () => {},
      warn: (obj: object, msg?: string) => warnings.push({ obj: obj as Record<string, unknown>, msg: msg ?? '' }),
    };
    fake = fakeRepl({ diagnostics: [{ pattern: 'parse_me', message: "unexpected token '='; expected term" }] });
    pool = new ReplPool({
      replCmd: fake.command,
      header: 'import Mathlib',
      timeoutMs: 10_000,
      size: 1,
      log,
      onIntegrity: leanIntegrityRecorder({ meter: Runtime.instance().metricMeter, statusFile: leanIntegrityFile(dataDir), log }),
    });

    const scrape = async () => {
      const res = await fetch(`http://${address}/metrics`);
      expect(res.status).toBe(200);
      return integritySamples(await res.text());
    };
    // Nothing counted before an event (absent or zero).
    expect((await scrape())['tampering/check'] ?? 0).toBe(0);

    const forged = await pool.check('theorem FORGE_REPL : False := by sorry', { domain: 'key:mallory' });
    expect(forged).toMatchObject({ status: 'refused', refusedBy: 'tampering' });
    const again = await pool.check('theorem FORGE_REPL : False := by sorry', { domain: 'key:mallory' });
    expect(again).toMatchObject({ status: 'refused', refusedBy: 'tampering' });
    const disagreed = await pool.check('theorem parse_me : True := by sorry', { domain: 'predictions:sw/A' });
    expect(disagreed).toMatchObject({ status: 'refused', refusedBy: 'disagreement' });
    await expect(pool.check('theorem fine : True := by sorry', { domain: 'key:alice' })).resolves.toMatchObject({ status: 'ok' });

    // The exporter reads the runtime's meter on each scrape.
    let samples: Record<string, number> = {};
    const done = () => samples['tampering/check'] === 2 && samples['disagreement/check'] === 1;
    for (let i = 0; i < 20 && !done(); i++) {
      samples = await scrape();
      if (!done()) await new Promise((r) => setTimeout(r, 100));
    }
    expect(samples).toEqual({ 'tampering/check': 2, 'disagreement/check': 1 });

    const integrity = warnings.filter((w) => w.obj.leanIntegrity !== undefined);
    expect(integrity.map((w) => w.obj)).toMatchObject([
      { leanIntegrity: 'tampering', domain: 'key:mallory', during: 'check' },
      { leanIntegrity: 'tampering', domain: 'key:mallory', during: 'check' },
      { leanIntegrity: 'disagreement', domain: 'predictions:sw/A', during: 'check' },
    ]);
    expect(integrity.map((w) => w.msg)).toEqual([
      expect.stringMatching(/tampering/),
      expect.stringMatching(/tampering/),
      expect.stringMatching(/disagree/),
    ]);

    // The API, another process, reads the same data directory: /readyz reports the counts and
    // warns, without the domains (an API key's name) or the detail; the stack stays ready.
    const file = leanIntegrityFile(dataDir);
    expect(readLeanIntegrity(file)).toMatchObject({ tampering: 2, disagreement: 1, lastKind: 'disagreement' });
    expect(readFileSync(file, 'utf8')).not.toMatch(/mallory|predictions:|FORGE/);
    const readyz = createReadinessCheck({
      client: healthyTemporal,
      namespace: 'default',
      unbuiltIndexes: () => [],
      missing: [],
      leanIntegrity: () => readLeanIntegrity(file),
    });
    const report = await readyz();
    expect(Value.Check(ReadinessSchema, report)).toBe(true);
    expect(report.ready).toBe(true);
    expect(report.leanIntegrity).toMatchObject({ tampering: 2, disagreement: 1, lastKind: 'disagreement' });
    expect(report.warnings).toEqual([
      expect.stringMatching(/^Lean integrity: 2 REPL tamperings and 1 screen\/Lean parse disagreement recorded/),
    ]);
  });
});

describe('the Lean integrity status file', () => {
  it('keeps each worker process apart and sums them; a clean or unreadable file reads as none', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'driftline-integrity-')), 'lean-integrity.json');
    expect(readLeanIntegrity(file)).toEqual({ tampering: 0, disagreement: 0 });
    recordLeanIntegrity(file, 'tampering', new Date('2026-12-06T10:00:00Z'), '1@a');
    recordLeanIntegrity(file, 'disagreement', new Date('2026-12-06T11:00:00Z'), '2@b');
    recordLeanIntegrity(file, 'tampering', new Date('2026-12-06T09:00:00Z'), '1@a');
    expect(readLeanIntegrity(file)).toEqual({
      tampering: 2,
      disagreement: 1,
      lastAt: '2026-12-06T11:00:00.000Z',
      lastKind: 'disagreement',
    });
    const readyz = createReadinessCheck({
      client: healthyTemporal,
      namespace: 'default',
      unbuiltIndexes: () => [],
      missing: [],
      leanIntegrity: () => readLeanIntegrity(join(file, 'none')),
    });
    const clean = await readyz();
    expect(clean.leanIntegrity).toBeUndefined();
    expect(clean.warnings).toBeUndefined();
    rmSync(join(file, '..'), { recursive: true, force: true });
  });
});
