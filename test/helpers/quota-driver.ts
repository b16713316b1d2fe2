// Drives one provider's budget the way a worker's LLM activities do: `concurrency` loops, each
// asking the judge through a real LlmClient whose transport is the budgeted fetch over a shared
// budget store, and, when a call fails retryably (a 429, the budget's own wait), waiting what the
// failure says before the next try (Temporal's nextRetryDelay). Run in-process, or as a child
// process (`tsx test/helpers/quota-driver.ts '<json options>'`, printing one JSON line) so that
// several processes share one budget (a SQLite file or a PostgreSQL database) as several workers do.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLlmClient } from '../../engines/llm/client';
import { budgetedFetch } from '../../engines/llm/budgeted-fetch';
import type { BudgetStore, ProviderLimits } from '../../engines/llm/budget';
import { EngineError } from '../../engines/errors';
import { openSqlite } from '../../engines/results/sqlite';
import { openPostgres } from '../../engines/results/postgres';
import { SqlBudgetStore } from '../../engines/results/llm-budget';
import { FAKE_MODELS } from '../fakes/openai-server';

export interface DriveOptions {
  url: string;
  limits: ProviderLimits;
  /** How long to keep sending (ms). */
  durationMs: number;
  concurrency: number;
  maxTokens?: number;
  /** Text of each prompt (its length sets the prompt's tokens). */
  promptChars?: number;
}

export interface DriveResult {
  answered: number;
  /** Calls that failed retryably (429 from the provider or the budget) and were tried again. */
  retried: number;
  failed: number;
}

export async function drive(store: BudgetStore, opts: DriveOptions): Promise<DriveResult> {
  const timeoutMs = 30_000;
  const llm = createLlmClient({
    baseURL: opts.url,
    apiKey: 'test-key',
    models: { decomposer: FAKE_MODELS.decomposer, formalizer: FAKE_MODELS.formalizer, judge: FAKE_MODELS.judge },
    timeoutMs,
    maxReasks: 0,
    structuredOutput: 'prompt',
    maxTokens: { judge: opts.maxTokens ?? 200 },
    fetch: budgetedFetch({
      provider: 'default',
      limits: opts.limits,
      store,
      maxWaitMs: timeoutMs,
      callTimeoutMs: timeoutMs,
      leaseMs: 60_000,
    }),
  });
  const result: DriveResult = { answered: 0, retried: 0, failed: 0 };
  const end = Date.now() + opts.durationMs;
  const filler = 'x'.repeat(opts.promptChars ?? 400);
  let n = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (Date.now() < end) {
        const i = n++;
        try {
          await llm.complete('judge', [
            { role: 'user', content: `Informal statement: item ${i} ${filler}\nFormal statement: theorem t${i} : True := by sorry` },
          ]);
          result.answered++;
        } catch (err) {
          if (err instanceof EngineError && !err.nonRetryable) {
            result.retried++;
            await new Promise((r) => setTimeout(r, err.retryAfterMs ?? 1000));
          } else {
            result.failed++;
          }
        }
      }
    }),
  );
  return result;
}

/** Runs `drive` in a child process of its own (a worker process of its own), on the budget in
 * `opts.sqlite` or `opts.postgres`. */
export function driveInChild(opts: DriveOptions & ({ sqlite: string } | { postgres: string })): Promise<DriveResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), JSON.stringify(opts)], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as DriveResult) : reject(new Error(`driver exited ${code}: ${err}`)),
    );
  });
}

// As a child process: one JSON argument with the options and where the shared budget is: `sqlite`
// (a file) or `postgres` (a URL).
if (process.argv[1]?.endsWith('quota-driver.ts') && process.argv[2]) {
  const opts = JSON.parse(process.argv[2]) as DriveOptions & ({ sqlite: string } | { postgres: string });
  const db = 'postgres' in opts ? openPostgres(opts.postgres) : openSqlite(opts.sqlite);
  const out = await drive(new SqlBudgetStore(db), opts);
  await db.close();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
