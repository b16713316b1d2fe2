// The routes the page uses, typed. Errors are problem+json (`detail`) or `{message}`.
import type { RunConfig } from '../common/run-config-schema';
import type { SweepProgress } from '../common/sweep';
import type { LlmQuotaView, RunEvent, RunSummary as WireRunSummary, RunView as WireRunView, SweepBatchesView } from '../common/wire';
export type { LlmQuotaView, SweepBatchesView };

export interface WebConfig {
  libraries: string[];
  defaultLibrary: string;
  /** Base URL of the Temporal UI, when the server knows it. */
  temporalUiUrl?: string;
  namespace: string;
  maxStatementChars: number;
  /** `pipeline`, and `agent` where the server has agent mode. */
  modes: string[];
  /** /v1 needs `Authorization: Bearer <key>`. */
  apiKeysRequired: boolean;
  /** The server has the sweep routes. */
  sweeps: boolean;
}

export interface RunLinks {
  self?: string;
  events?: string;
  temporalUi?: string;
}

/** A run as `GET /v1/formalizations/:id` answers it (the shape is common/wire.ts's). */
export type RunView = WireRunView & { links?: RunLinks };

/** A run in `GET /v1/formalizations`. */
export type RunSummary = WireRunSummary & { links?: RunLinks };

export interface SweepLinks {
  self: string;
  report: string;
  temporalUi: string;
  temporalUiRuns: string;
}

/** A sweep as `GET /v1/sweeps/:id` answers it: its progress, links, the deployment's LLM quota
 * while it goes, and its provider batches in batch mode. */
export type SweepView = SweepProgress & { links: SweepLinks; llmQuota?: LlmQuotaView[]; batches?: SweepBatchesView };
/** What a sweep's buttons ask: the three signals, and `retry` (POST …/retry: start the failed
 * runs of an ended sweep again). */
export type SweepSignal = 'pause' | 'resume' | 'cancel' | 'retry';

/** One event of `GET /v1/formalizations/:id/events`. */
export type { RunEvent };

export type StartBody = { statement: string; library: string; config: Partial<RunConfig> };

export class ApiError extends Error {}

async function readJson<T>(response: Response): Promise<T> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const b = body as { detail?: string; message?: string } | undefined;
    throw new ApiError(b?.detail ?? b?.message ?? `${response.status} ${response.statusText}`);
  }
  return body as T;
}

const KEY_STORAGE = 'driftline-api-key';

/** The API key the person entered (kept for this browser tab only). */
export const apiKey = {
  get: (): string => sessionStorage.getItem(KEY_STORAGE) ?? '',
  set: (key: string): void => (key ? sessionStorage.setItem(KEY_STORAGE, key) : sessionStorage.removeItem(KEY_STORAGE)),
};

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = apiKey.get();
  return { ...extra, ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

export const api = {
  config: () => fetch('/web/config.json').then((r) => readJson<WebConfig>(r)),
  start: (body: StartBody) =>
    fetch('/v1/formalizations', {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    }).then((r) => readJson<{ id: string; links?: RunLinks }>(r)),
  get: (id: string) => fetch(`/v1/formalizations/${encodeURIComponent(id)}`, { headers: headers() }).then((r) => readJson<RunView>(r)),
  recent: (limit: number) =>
    fetch(`/v1/formalizations?limit=${limit}`, { headers: headers() }).then((r) =>
      readJson<{ items: RunSummary[]; nextPageToken?: string }>(r),
    ),
  eventsUrl: (id: string) => `/v1/formalizations/${encodeURIComponent(id)}/events`,
  sweeps: (limit: number) => fetch(`/v1/sweeps?limit=${limit}`, { headers: headers() }).then((r) => readJson<{ items: SweepView[] }>(r)),
  signalSweep: (id: string, signal: SweepSignal) =>
    fetch(`/v1/sweeps/${encodeURIComponent(id)}/${signal}`, { method: 'POST', headers: headers() }).then((r) =>
      readJson<{ id: string }>(r),
    ),
  /** The report page as a blob URL: fetched with the API key, which a plain link cannot carry. */
  reportUrl: (view: SweepView) =>
    fetch(view.links.report, { headers: headers({ accept: 'text/html' }) })
      .then(async (r) => {
        if (!r.ok) await readJson(r);
        return r.blob();
      })
      .then((b) => URL.createObjectURL(b)),
};

const END_TYPES = new Set(['run.completed', 'run.failed', 'run.canceled']);

/**
 * Reads a run's server-sent events until the run ends. fetch rather than EventSource, so the
 * API key can go in a header; a dropped connection is resumed with Last-Event-ID, so no event
 * is missed or seen twice.
 */
export async function followEvents(id: string, onEvent: (event: RunEvent) => void, signal: AbortSignal): Promise<void> {
  let lastId: string | undefined;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const response = await fetch(api.eventsUrl(id), {
        headers: headers({ accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) }),
        signal,
      });
      if (!response.ok || !response.body) await readJson(response);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut: number;
        while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
          let data = '';
          for (const line of block.split(/\r?\n/)) {
            if (line.startsWith('id:')) lastId = line.slice(3).trim();
            else if (line.startsWith('data:')) data += line.slice(5).trimStart();
          }
          if (!data) continue;
          const event = JSON.parse(data) as RunEvent;
          failures = 0;
          onEvent(event);
          if (END_TYPES.has(event.type)) return;
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError) throw err;
      if (++failures > 5) throw new ApiError(`lost the run's event stream: ${(err as Error).message}`);
    }
    // The stream closed before the run ended: resume after the last event seen.
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** A filtered list in the Temporal UI. */
export function temporalListUrl(config: WebConfig, query: string): string | undefined {
  if (!config.temporalUiUrl) return undefined;
  return `${config.temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(config.namespace)}/workflows?query=${encodeURIComponent(query)}`;
}

/** A run's page in the Temporal UI. */
export function temporalRunUrl(config: WebConfig, id: string): string | undefined {
  if (!config.temporalUiUrl) return undefined;
  return `${config.temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(id)}`;
}
