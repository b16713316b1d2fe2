// The page: a form that starts a run, the run's stages as they arrive (server-sent events), its
// result, and the recent runs. `#run=<id>` in the address shows one run.
import './style.css';
import { api, ApiError, apiKey, followEvents, temporalListUrl, temporalRunUrl, type RunView, type WebConfig } from './api';
import { breakableId, withInlineCode } from './inline-text';
import { h, outcomeBadge, renderResult, StageList } from './render';
import { shortDuration, SweepsPanel } from './sweeps';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const form = $<HTMLFormElement>('run-form');
const submit = $<HTMLButtonElement>('submit');
const formError = $<HTMLParagraphElement>('form-error');
const runSection = $<HTMLElement>('run');
const stages = new StageList($<HTMLOListElement>('stages'));
const resultBox = $<HTMLDivElement>('result');

let config: WebConfig;
let following: AbortController | undefined;
const sweeps = new SweepsPanel($<HTMLElement>('sweeps'), $<HTMLElement>('sweeps-empty'), () => config);

function showError(message: string): void {
  // API reasons quote Lean in code spans (`:=`): shown as code, set as text.
  formError.replaceChildren(...withInlineCode(message));
  formError.hidden = !message;
}

function setStatus(status: string): void {
  const badge = $<HTMLSpanElement>('run-status');
  badge.textContent = status;
  badge.className = `badge status-${status}`;
}

function syncModeFields(): void {
  const agent = $<HTMLSelectElement>('mode').value === 'agent';
  for (const el of document.querySelectorAll<HTMLElement>('[data-pipeline]')) el.hidden = agent;
}

async function showResult(id: string): Promise<void> {
  const view: RunView = await api.get(id);
  setStatus(view.status);
  if (view.status === 'completed' && view.result) {
    resultBox.replaceChildren(renderResult(view.result, view.links?.temporalUi ?? temporalRunUrl(config, id)));
  } else if (view.status === 'failed' || view.status === 'canceled') {
    resultBox.replaceChildren(
      h('p', { class: 'error', role: 'alert' }, ...withInlineCode(`The run ${view.status}: ${view.error ?? 'no reason given'}`)),
    );
  }
  void loadRecent();
}

/** Shows a run: its stages as they arrive, then its result. */
function follow(id: string): void {
  following?.abort();
  const controller = new AbortController();
  following = controller;
  stages.reset();
  resultBox.replaceChildren();
  runSection.hidden = false;
  $<HTMLElement>('run-id').replaceChildren(...breakableId(id));
  setStatus('running');
  const link = temporalRunUrl(config, id);
  const anchor = $<HTMLAnchorElement>('run-temporal');
  anchor.hidden = !link;
  if (link) anchor.href = link;

  followEvents(
    id,
    (event) => {
      if (event.type.startsWith('stage.')) stages.apply(event);
    },
    controller.signal,
  )
    .then(() => (controller.signal.aborted ? undefined : showResult(id)))
    .catch((err: Error) => {
      if (!controller.signal.aborted) resultBox.replaceChildren(h('p', { class: 'error', role: 'alert' }, ...withInlineCode(err.message)));
    });
}

async function loadRecent(): Promise<void> {
  const body = document.querySelector<HTMLTableSectionElement>('#recent tbody')!;
  try {
    const { items } = await api.recent(15);
    body.replaceChildren(
      ...items.map((run) => {
        // What a person recognises a run by: its statement's first words, or a sweep's item.
        const label = run.statement ?? (run.item ? `${run.item}${run.sweep ? ` (sweep ${run.sweep})` : ''}` : run.id);
        const took = run.closedAt && run.startedAt ? (Date.parse(run.closedAt) - Date.parse(run.startedAt)) / 1000 : undefined;
        return h(
          'tr',
          {},
          h(
            'td',
            { class: 'run-label' },
            h('a', { href: `#run=${encodeURIComponent(run.id)}`, title: run.id }, label),
            h('small', { class: 'run-id' }, ...breakableId(run.id)),
          ),
          h('td', {}, run.config ?? ''),
          h('td', {}, h('span', { class: `badge status-${run.status}` }, run.status)),
          h('td', {}, outcomeBadge(run.outcome)),
          h('td', {}, run.startedAt ? h('time', { datetime: run.startedAt }, new Date(run.startedAt).toLocaleString()) : ''),
          h('td', { class: 'num' }, run.status === 'running' ? 'running' : shortDuration(took)),
        );
      }),
    );
    $<HTMLElement>('recent-empty').hidden = items.length > 0;
  } catch (err) {
    body.replaceChildren(h('tr', {}, h('td', { colspan: '6', class: 'error' }, `Cannot list runs: ${(err as Error).message}`)));
  }
}

function numberField(name: string): number {
  return Number((form.elements.namedItem(name) as HTMLInputElement).value);
}

function checked(name: string): boolean {
  return (form.elements.namedItem(name) as HTMLInputElement).checked;
}

form.addEventListener('submit', async (e) => {
  e.preventDefault();
  const statement = ($<HTMLTextAreaElement>('statement').value ?? '').trim();
  if (!statement) {
    showError('Write a statement first.');
    $<HTMLTextAreaElement>('statement').focus();
    return;
  }
  showError('');
  const mode = $<HTMLSelectElement>('mode').value;
  const run =
    mode === 'agent'
      ? { mode: 'agent' as const, judge: checked('judge') }
      : {
          retrieval: $<HTMLSelectElement>('retrieval').value as 'drift' | 'monolithic' | 'none',
          decompose: checked('decompose'),
          examples: numberField('examples'),
          illustrate: numberField('examples') > 0,
          repairRounds: numberField('repairRounds'),
          judge: checked('judge'),
        };
  submit.disabled = true;
  try {
    const started = await api.start({ statement, library: $<HTMLSelectElement>('library').value, config: run });
    history.replaceState(null, '', `#run=${encodeURIComponent(started.id)}`);
    follow(started.id);
    void loadRecent();
    $<HTMLElement>('run-heading').focus();
  } catch (err) {
    showError(err instanceof ApiError ? err.message : `Cannot start the run: ${(err as Error).message}`);
  } finally {
    submit.disabled = false;
  }
});

function runFromHash(): void {
  const match = /^#run=(.+)$/.exec(location.hash);
  if (match) follow(decodeURIComponent(match[1]!));
}

async function init(): Promise<void> {
  config = await api.config();
  const library = $<HTMLSelectElement>('library');
  library.replaceChildren(...config.libraries.map((name) => h('option', { value: name }, name)));
  library.value = config.defaultLibrary;
  $<HTMLTextAreaElement>('statement').maxLength = config.maxStatementChars;
  const mode = $<HTMLSelectElement>('mode');
  for (const option of Array.from(mode.options)) option.disabled = !config.modes.includes(option.value);
  mode.addEventListener('change', syncModeFields);
  syncModeFields();
  if (config.temporalUiUrl) {
    const top = $<HTMLAnchorElement>('temporal-link');
    top.href = temporalListUrl(config, 'WorkflowType = "formalize"')!;
    top.hidden = false;
    $<HTMLAnchorElement>('filter-not-compiled').href = temporalListUrl(config, 'DriftlineOutcome = "not-compiled"')!;
    $<HTMLAnchorElement>('filter-refused').href = temporalListUrl(config, 'DriftlineOutcome = "refused"')!;
    $<HTMLAnchorElement>('filter-unfaithful').href = temporalListUrl(config, 'DriftlineOutcome = "unfaithful"')!;
    $<HTMLElement>('temporal-filters').hidden = false;
  }
  if (config.apiKeysRequired) {
    const keyForm = $<HTMLFormElement>('key-form');
    const keyInput = $<HTMLInputElement>('api-key');
    keyForm.hidden = false;
    keyInput.value = apiKey.get();
    keyForm.addEventListener('submit', (e) => {
      e.preventDefault();
      apiKey.set(keyInput.value.trim());
      void loadRecent();
      if (config.sweeps) void sweeps.refresh();
    });
  }
  $<HTMLButtonElement>('refresh').addEventListener('click', () => void loadRecent());
  $<HTMLButtonElement>('sweeps-refresh').addEventListener('click', () => void sweeps.refresh());
  window.addEventListener('hashchange', runFromHash);
  runFromHash();
  // The sweeps panel shows where the server has the sweep routes (a results database).
  $<HTMLElement>('sweeps-panel').hidden = !config.sweeps;
  await Promise.all([loadRecent(), config.sweeps ? sweeps.refresh() : undefined]);
}

$<HTMLElement>('run-heading').tabIndex = -1;
init().catch((err: Error) => showError(`The page cannot reach the API: ${err.message}`));
