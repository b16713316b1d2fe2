// One terminal line per run started and per run ended (id, library, outcome, time), whoever
// started it (the API, the CLI, a sweep), read from Temporal's visibility store every few
// seconds, so the stack's terminal shows what the service is doing.
import type { Client } from '@temporalio/client';
import { listFormalizations, type RunSummary } from '../client/runs';

export interface RunLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RunWatcher {
  stop(): Promise<void>;
}

/** Polls for runs that started or ended since the last look; prints each once. */
export function watchRuns(client: Client, log: RunLog, intervalMs = 2000): RunWatcher {
  const started = new Set<string>();
  const ended = new Set<string>();
  // Runs already there when the stack starts are not news.
  const since = Date.now();
  let stopped = false;
  let failures = 0;

  let lastLook = since;
  const look = async () => {
    // Everything that started or closed since the last look (with a margin for visibility's
    // lag), all pages: a burst of hundreds of runs is reported whole.
    const from = new Date(lastLook - 10_000).toISOString();
    const now = Date.now();
    const runs: RunSummary[] = [];
    let pageToken: string | undefined;
    do {
      const page = await listFormalizations(client, { changedSince: from, limit: 200, pageToken });
      runs.push(...page.items);
      pageToken = page.nextPageToken;
    } while (pageToken && !stopped);
    lastLook = now;
    for (const run of runs.reverse()) report(run);
  };
  const report = (run: RunSummary) => {
    const key = `${run.id}@${run.startedAt}`;
    if (Date.parse(run.startedAt) >= since && !started.has(key)) {
      started.add(key);
      log.info({ id: run.id, library: run.library, config: run.config }, 'run started');
    }
    if (run.status !== 'running' && run.closedAt && Date.parse(run.closedAt) >= since && !ended.has(key)) {
      ended.add(key);
      const seconds = Math.round((Date.parse(run.closedAt) - Date.parse(run.startedAt)) / 100) / 10;
      const line = { id: run.id, status: run.status, ...(run.outcome ? { outcome: run.outcome } : {}), seconds };
      if (run.status === 'completed') log.info(line, 'run ended');
      else log.warn(line, 'run ended');
    }
  };

  const loop = (async () => {
    while (!stopped) {
      try {
        await look();
        failures = 0;
      } catch (err) {
        // Temporal busy or restarting: say so once, keep looking.
        if (failures++ === 0) log.warn({ err: (err as Error).message }, 'cannot read the run list from Temporal');
      }
      await new Promise((r) => setTimeout(r, intervalMs).unref());
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
