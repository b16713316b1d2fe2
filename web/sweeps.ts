// The sweeps panel: each sweep's progress per configuration (done, failed, running, rate, ETA),
// pause, resume and cancel, a retry of an ended sweep's failed runs, its provider batches in batch
// mode, and links to its report and to its runs in the Temporal UI. It polls
// while any sweep is still going. Text from the server goes in as text only (render.ts's h).
import { configRate } from '../common/sweep';
import { batchCountsText, batchInFlightText } from '../common/sweep-batches-text';
import { api, ApiError, type SweepSignal, type SweepView, type WebConfig } from './api';
import { breakableId } from './inline-text';
import { h } from './render';

const POLL_MS = 2500;

/** Seconds as a short duration: 45 s, 12 min, 3 h 5 min; '–' when unknown. */
export function shortDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  const hours = Math.floor(seconds / 3600);
  return `${hours} h ${Math.round((seconds - hours * 3600) / 60)} min`;
}

const SIGNALS_BY_STATUS: Record<string, SweepSignal[]> = { running: ['pause', 'cancel'], paused: ['resume', 'cancel'] };
const SIGNAL_WORDS: Record<SweepSignal, string> = { pause: 'Pause', resume: 'Resume', cancel: 'Cancel', retry: 'Retry failed' };

/** The buttons of a sweep: its signals while it goes; once it has ended with failed runs, retry. */
function actionsOf(view: SweepView): SweepSignal[] {
  if ((view.status === 'completed' || view.status === 'cancelled') && view.failed > 0) return ['retry'];
  return SIGNALS_BY_STATUS[view.status] ?? [];
}

export class SweepsPanel {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private busy = false;

  constructor(
    private readonly list: HTMLElement,
    private readonly empty: HTMLElement,
    private readonly config: () => WebConfig,
  ) {}

  /** Loads the sweeps now, and again every few seconds while one is running or paused. */
  async refresh(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    let views: SweepView[];
    try {
      views = (await api.sweeps(10)).items;
    } catch (err) {
      this.list.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Cannot list sweeps: ${(err as Error).message}`));
      return;
    }
    this.empty.hidden = views.length > 0;
    this.list.replaceChildren(...views.map((v) => this.card(v)));
    if (views.some((v) => v.status === 'running' || v.status === 'paused')) this.timer = setTimeout(() => void this.refresh(), POLL_MS);
  }

  private card(view: SweepView): HTMLElement {
    const configs = Object.entries(view.perConfig);
    const overallEta = view.status === 'paused' ? 'paused' : shortDuration(view.etaSeconds);
    const actions = actionsOf(view).map((signal) => {
      const button = h(
        'button',
        { type: 'button', class: signal === 'cancel' ? 'secondary danger' : 'secondary', 'data-signal': signal },
        SIGNAL_WORDS[signal],
      );
      button.addEventListener('click', () => void this.signal(view, signal, button));
      return button;
    });
    const report = h('a', { href: view.links.report, target: '_blank', rel: 'noopener', class: 'report-link' }, 'Report');
    if (this.config().apiKeysRequired) {
      // A link cannot carry the API key: fetch the report with it and open the page from memory.
      report.addEventListener('click', (e) => {
        e.preventDefault();
        api.reportUrl(view).then(
          (url) => window.open(url, '_blank', 'noopener'),
          (err: Error) => this.showError(view.sweepId, err.message),
        );
      });
    }
    return h(
      'article',
      { class: 'sweep', 'data-sweep': view.sweepId, 'aria-label': `Sweep ${view.sweepId}` },
      h(
        'div',
        { class: 'heading-row' },
        h('h3', {}, h('code', {}, ...breakableId(view.sweepId)), ' ', h('span', { class: `badge status-${view.status}` }, view.status)),
        h('div', { class: 'actions' }, ...actions),
      ),
      h(
        'p',
        { class: 'sweep-total' },
        `${view.done} of ${view.total} runs done, ${view.failed} failed${view.retried !== undefined ? `, ${view.retried} retried` : ''}, ${view.running} running · ${view.rate.toFixed(2)} runs/s · ETA ${overallEta}`,
      ),
      h(
        'table',
        { class: 'sweep-configs' },
        h('caption', { class: 'visually-hidden' }, `Progress of sweep ${view.sweepId} per configuration`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Configuration', 'Progress', 'Done', 'Failed', 'Running', 'Rate', 'ETA'].map((t, i) =>
              h('th', { scope: 'col', ...(i > 1 ? { class: 'num' } : {}) }, t),
            ),
          ),
        ),
        h(
          'tbody',
          {},
          ...configs.map(([name, c]) => {
            const { rate, etaSeconds } = configRate(view, c);
            return h(
              'tr',
              { 'data-config': name },
              h('th', { scope: 'row' }, name),
              h(
                'td',
                {},
                h('progress', {
                  max: String(Math.max(1, c.total)),
                  value: String(c.done),
                  'aria-label': `${name}: ${c.done} of ${c.total}`,
                }),
              ),
              h('td', { class: 'num' }, `${c.done}/${c.total}`),
              h('td', { class: 'num' }, String(c.failed)),
              h('td', { class: 'num' }, String(c.running)),
              h('td', { class: 'num' }, `${rate.toFixed(2)}/s`),
              h('td', { class: 'num' }, view.status === 'paused' ? 'paused' : shortDuration(etaSeconds)),
            );
          }),
        ),
      ),
      h(
        'p',
        { class: 'sweep-links' },
        report,
        ' · ',
        h('a', { href: view.links.temporalUiRuns, target: '_blank', rel: 'noopener' }, 'Its runs in the Temporal UI'),
        ' · ',
        h('a', { href: view.links.temporalUi, target: '_blank', rel: 'noopener' }, 'The sweep workflow'),
      ),
      ...batchesSection(view),
      ...quotaLines(view),
      h('p', { class: 'error sweep-error', role: 'alert', hidden: '' }),
    );
  }

  private showError(id: string, message: string): void {
    const box = this.list.querySelector<HTMLElement>(`article[data-sweep="${CSS.escape(id)}"] .sweep-error`);
    if (!box) return;
    box.textContent = message;
    box.hidden = false;
  }

  private async signal(view: SweepView, signal: SweepSignal, button: HTMLButtonElement): Promise<void> {
    if (this.busy) return;
    if (signal === 'cancel' && !window.confirm(`Cancel sweep ${view.sweepId}? Its running runs are cancelled and no new ones start.`))
      return;
    this.busy = true;
    button.disabled = true;
    try {
      await api.signalSweep(view.sweepId, signal);
      await this.refresh();
    } catch (err) {
      this.showError(view.sweepId, err instanceof ApiError ? err.message : `Cannot ${signal} the sweep: ${(err as Error).message}`);
      button.disabled = false;
    } finally {
      this.busy = false;
    }
  }
}

/** A batch-mode sweep's provider batches: the counts, and each batch in flight (its provider and
 * model, ID, status at the provider, requests, since when). Nothing for a sweep without any. */
function batchesSection(view: SweepView): HTMLElement[] {
  const b = view.batches;
  if (!b) return [];
  const now = Date.now();
  return [
    h(
      'section',
      { class: 'sweep-batches', 'aria-label': `LLM batches of sweep ${view.sweepId}` },
      h('p', { class: 'sweep-batch-counts' }, `LLM batches · ${batchCountsText(b)}`),
      ...(b.batches.length > 0
        ? [
            h(
              'ul',
              { class: 'sweep-batch-list' },
              ...b.batches.map((x) =>
                h(
                  'li',
                  { 'data-batch': x.id, 'data-status': x.status },
                  h('code', {}, ...breakableId(`${x.provider}/${x.model}`)),
                  ' ',
                  h('code', {}, ...breakableId(x.id)),
                  `: ${batchInFlightText(x, now)}`,
                ),
              ),
            ),
          ]
        : []),
    ),
  ];
}

/** Each LLM provider's quota (the limit that binds, how close to it), under a sweep still going. */
function quotaLines(view: SweepView): HTMLElement[] {
  return (view.llmQuota ?? []).map((q) =>
    h('p', { class: 'sweep-quota', title: 'LLM quota over the last minute, whole deployment' }, `LLM quota · ${q.summary}`),
  );
}
