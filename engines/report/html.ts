// The report as one self-contained HTML page: inline CSS, charts as inline SVG rendered on the
// server, no scripts and nothing fetched, so it works offline and from a file:// URL.
import type { SweepRunRecord } from '../../common/sweep';
import type { RefusedBy } from '../../common/lean-types';
import type { ReportData } from './report-data';
import { protocolRows, temporalRunUrl } from './report-data';
import { agreementTables } from './judge-agreement-tables';
import { configurationTables } from './configuration-tables';
import {
  cellText,
  comparisonsTable,
  detailTable,
  factorialTables,
  rankedComparisonsTable,
  findings,
  latencyTable,
  outcomeTable,
  passAtKTable,
  retrievalTable,
  summaryTable,
  tagTables,
  type Cell,
  type Table,
} from './tables';

export interface HtmlCharts {
  rates: string | null;
  retrieval: string | null;
  repairBudget: string | null;
  stepBudget: string | null;
  /** One per factorial analysis, same order. */
  effects: string[];
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function cellHtml(c: Cell, numeric: boolean): string {
  const cls = [numeric ? 'num' : '', typeof c === 'string' ? '' : (c.cls ?? '')].filter(Boolean).join(' ');
  const attrs = `${cls ? ` class="${cls}"` : ''}${typeof c !== 'string' && c.title ? ` title="${escapeHtml(c.title)}"` : ''}`;
  const text = escapeHtml(cellText(c));
  const inner = typeof c !== 'string' && c.href ? `<a href="${escapeHtml(c.href)}">${text}</a>` : text;
  return `<td${attrs}>${inner}</td>`;
}

export function tableHtml(t: Table, level = 3): string {
  const numeric = new Set(t.numeric ?? []);
  const head = t.header.map((h, i) => `<th${numeric.has(i) ? ' class="num"' : ''}>${escapeHtml(h)}</th>`).join('');
  const body = t.rows.map((r) => `<tr>${r.map((c, i) => cellHtml(c, numeric.has(i))).join('')}</tr>`).join('\n');
  return `<h${level} id="${escapeHtml(t.id)}">${escapeHtml(t.title)}</h${level}>
${t.caption ? `<p class="caption">${escapeHtml(t.caption)}</p>` : ''}
<div class="scroll"><table><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table></div>`;
}

const OUTCOME_BADGE: Record<string, { mark: string; cls: string }> = {
  faithful: { mark: 'F', cls: 'o-faithful' },
  unfaithful: { mark: 'C', cls: 'o-compiled' },
  compiled: { mark: 'C', cls: 'o-compiled' },
  'not-compiled': { mark: '✗', cls: 'o-fail' },
  refused: { mark: 'R', cls: 'o-refused' },
  unchecked: { mark: '?', cls: 'o-unchecked' },
  failed: { mark: '!', cls: 'o-error' },
  'budget-exhausted': { mark: 'B', cls: 'o-fail' },
  missing: { mark: '∅', cls: 'o-error' },
};

/** Who refused a run: the screen before Lean, or (a hole found) the REPL's integrity check. */
function refusedWords(by: SweepRunRecord['refusedBy']): string {
  if (by === 'tampering') return "refused for tampering (the Lean REPL's reply was forged; never compiled)";
  if (by === 'disagreement') return 'refused: Lean could not parse what the screen accepted (never compiled)';
  return 'refused by the screen before Lean';
}

/** A refusal that was a hole found, not the screen's, is marked apart (decision 0017). */
const REFUSED_BY_BADGE: Record<RefusedBy, { mark: string; cls: string }> = {
  tampering: { mark: 'T', cls: 'o-error' },
  disagreement: { mark: 'D', cls: 'o-error' },
};

function runTitle(r: SweepRunRecord): string {
  const parts = [`${r.workflowId}`, `outcome ${r.outcome}`];
  if (r.judgeGrade !== null) parts.push(`grade ${r.judgeGrade}`);
  if (r.equivalent !== null) parts.push(r.equivalent ? 'equivalent to gold' : 'not equivalent to gold');
  else if (r.notComparable) parts.push('not comparable with gold (their definitions differ)');
  parts.push(`repair rounds ${r.repairRounds}`);
  if (r.outcome === 'refused') parts.push(`${refusedWords(r.refusedBy)}${r.refusal ? `: ${r.refusal}` : ''}`);
  if (r.error) parts.push(`error: ${r.error}`);
  return parts.join(' · ');
}

/** Items × configurations; each run a badge linking to its Temporal UI page. The item's
 * informal statement and each configuration's final Lean statements and verdicts unfold on
 * request (`<details>`), so the grid stays a grid. */
export function itemsTableHtml(
  records: readonly SweepRunRecord[],
  configs: readonly string[],
  ui?: { base: string; namespace: string },
  informal?: Readonly<Record<string, string>>,
): string {
  const items = [...new Set(records.map((r) => r.item))];
  const at = new Map<string, SweepRunRecord[]>();
  for (const r of records) {
    const key = `${r.item}\u0000${r.config}`;
    const list = at.get(key);
    if (list) list.push(r);
    else at.set(key, [r]);
  }
  const rows = items.map((item) => {
    const cells = configs.map((config) => {
      const runs = (at.get(`${item}\u0000${config}`) ?? []).sort((a, b) => a.sample - b.sample);
      const badges = runs.map((r) => {
        const b = (r.outcome === 'refused' && r.refusedBy ? REFUSED_BY_BADGE[r.refusedBy] : OUTCOME_BADGE[r.outcome]) ?? {
          mark: '·',
          cls: 'o-unchecked',
        };
        const title = escapeHtml(runTitle(r));
        return ui
          ? `<a class="badge ${b.cls}" title="${title}" href="${escapeHtml(temporalRunUrl(ui.base, ui.namespace, r.workflowId))}">${b.mark}</a>`
          : `<span class="badge ${b.cls}" title="${title}">${b.mark}</span>`;
      });
      const lean = runs
        .filter((r) => r.formalStatement)
        .map(
          (r) =>
            `<p class="verdict">${runs.length > 1 ? `sample ${r.sample}: ` : ''}${escapeHtml(runTitle(r))}</p><pre class="lean">${escapeHtml(r.formalStatement)}</pre>`,
        )
        .join('');
      const details = lean ? `<details class="cell"><summary>Lean</summary>${lean}</details>` : '';
      return `<td>${badges.join('') || '<span class="none">–</span>'}${details}</td>`;
    });
    const text = informal?.[item];
    const itemCell = text
      ? `${escapeHtml(item)}<details class="cell"><summary>statement</summary><p class="informal">${escapeHtml(text)}</p></details>`
      : escapeHtml(item);
    return `<tr><td class="item">${itemCell}</td>${cells.join('')}</tr>`;
  });
  return `<div class="scroll items"><table><thead><tr><th>item</th>${configs.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr></thead><tbody>
${rows.join('\n')}
</tbody></table></div>`;
}

const CSS = `
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #e3e3e6; --bg: #ffffff; --head: #f6f7f9; --accent: #2f5d9e; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 8px; padding-top: 8px; border-top: 1px solid var(--line); }
h3 { font-size: 15px; margin: 22px 0 6px; }
.sub { color: var(--muted); margin: 0 0 16px; }
nav { font-size: 13px; margin: 8px 0 20px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
nav a { color: var(--accent); text-decoration: none; }
dl.protocol { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 16px; margin: 0; font-size: 13px; }
dl.protocol dt { color: var(--muted); }
dl.protocol dd { margin: 0; overflow-wrap: anywhere; }
ul.findings { padding-left: 20px; }
ul.findings li { margin: 4px 0; }
.caption { color: var(--muted); font-size: 12.5px; margin: 0 0 6px; max-width: 900px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0 8px; }
th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
th { background: var(--head); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.sig { color: #0b6b2f; font-weight: 600; }
td.noise { color: var(--muted); }
.chart { margin: 12px 0 4px; min-width: 0; max-width: 100%; }
.chart svg { max-width: 100%; height: auto; }
.charts { display: flex; flex-wrap: wrap; gap: 8px 36px; align-items: flex-start; }
.items td { padding: 3px 8px; }
.items td { vertical-align: top; }
.items td.item { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
details.cell { margin: 2px 0 0; font-weight: normal; } details.cell summary { font-size: 11px; font-weight: 400; }
details.cell pre.lean, details.cell p.informal { white-space: pre-wrap; max-width: 520px; font-size: 11.5px; margin: 2px 0 6px; }
details.cell p.informal { font-family: system-ui, sans-serif; white-space: normal; }
details.cell p.verdict { font-size: 11px; color: var(--muted); margin: 4px 0 0; white-space: normal; }
.badge { display: inline-block; min-width: 18px; height: 18px; line-height: 18px; margin-right: 3px; border-radius: 3px; text-align: center; font-size: 11px; font-weight: 700; text-decoration: none; color: #fff; }
.o-faithful { background: #2e8540; } .o-compiled { background: #c98a00; } .o-fail { background: #c0392b; }
.o-unchecked { background: #8a8f98; } .o-error { background: #5b0f0f; } .o-refused { background: #6a3d9a; }
.legend .badge { margin-left: 10px; }
.warn { background: #fff4e5; border: 1px solid #f0c36d; padding: 8px 12px; border-radius: 4px; }
pre { background: var(--head); padding: 10px 12px; overflow-x: auto; font-size: 12px; }
details { margin: 12px 0; } summary { cursor: pointer; color: var(--accent); font-weight: 600; }
footer { color: var(--muted); font-size: 12px; margin-top: 40px; }
`;

function chart(svg: string | null | undefined): string {
  return svg ? `<div class="chart">${svg}</div>` : '';
}

export function renderHtml(
  data: ReportData,
  records: readonly SweepRunRecord[],
  charts: HtmlCharts,
  ui?: { base: string; namespace: string },
): string {
  const s = data.sweep;
  const title = s.title ?? `Sweep ${s.id}`;
  const sections: string[] = [];
  const nav: [string, string][] = [['summary', 'Summary']];

  const found = findings(data);
  sections.push(`<h2 id="summary">Summary</h2>
<dl class="protocol">${protocolRows(data)
    .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`)
    .join('')}</dl>
${(s.notes ?? []).map((n) => `<p class="caption">${escapeHtml(n)}</p>`).join('')}
${found.length > 0 ? `<ul class="findings">${found.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>` : ''}
${tableHtml(summaryTable(data))}
${tableHtml(outcomeTable(data))}
<div class="charts">${chart(charts.rates)}</div>
${tableHtml(detailTable(data))}`);
  if (data.judgeAgreement) {
    nav.push(['judges', 'Judges']);
    sections.push(
      `<h2 id="judges">Judges side by side</h2>${agreementTables(data.judgeAgreement, data.bootstrap)
        .map((t) => tableHtml(t))
        .join('\n')}`,
    );
  }
  const passK = passAtKTable(data);
  if (passK) {
    nav.push(['pass-at-k', 'pass@k']);
    sections.push(tableHtml(passK, 2));
  }

  const retrieval = retrievalTable(data);
  if (retrieval) {
    nav.push(['retrieval', 'Retrieval']);
    sections.push(`<h2>Retrieval</h2>${tableHtml(retrieval)}${chart(charts.retrieval)}`);
  }
  const ranked = rankedComparisonsTable(data);
  const cmp = comparisonsTable(data);
  if (cmp) {
    nav.push(['comparisons', 'Comparisons']);
    sections.push(`<h2 id="comparisons">Comparisons</h2>${ranked ? tableHtml(ranked) : ''}
<details><summary>${escapeHtml(cmp.title)}</summary>${tableHtml({ ...cmp, title: 'All pairs', id: 'all-pairs' })}</details>`);
  }
  if (charts.repairBudget || charts.stepBudget) {
    nav.push(['budget', 'Budget']);
    sections.push(`<h2 id="budget">Success against budget</h2>
<p class="caption">Share of items (per item, the share of its samples) that compiled, or ended faithful, within the budget: from each run's recorded attempts (the loop stops at the first compiling attempt, which the judge grades) or, for agent runs, from the step at which the file first compiled and the steps taken.</p>
<div class="charts">${chart(charts.repairBudget)}${chart(charts.stepBudget)}</div>`);
  }
  if (data.factorial.length > 0 || data.factorialError) {
    nav.push(['factorial', 'Factorial']);
    const factors = s.design?.factors
      .map((f) => `${f.name}${f.low || f.high ? ` (0 = ${f.low ?? 'off'}, 1 = ${f.high ?? 'on'})` : ''}`)
      .join('; ');
    const body = data.factorial
      .map((a, i) => {
        const [cells, effects, simple] = factorialTables(a, s.design);
        const body = `<div class="charts"><div>${tableHtml(cells!, 3)}</div><div>${tableHtml(effects!, 3)}</div></div>${chart(charts.effects[i])}${simple ? tableHtml(simple, 3) : ''}`;
        // The first response (faithful@1 when judged) open; the others one click away.
        return i === 0
          ? body
          : `<details><summary>The same analysis for ${escapeHtml(a.response === 'f1' ? 'retrieval F1' : a.response)}</summary>${body}</details>`;
      })
      .join('\n');
    sections.push(`<h2 id="factorial">Factorial analysis</h2>
${factors ? `<p class="caption">Factors: ${escapeHtml(factors)}.</p>` : ''}
${data.factorialError ? `<p class="warn">No factorial analysis: ${escapeHtml(data.factorialError)}</p>` : ''}
${body}`);
  }
  const latency = latencyTable(data);
  if (latency) {
    nav.push(['latency', 'Latency']);
    sections.push(`<h2>Latency</h2>${tableHtml(latency)}`);
  }
  const tags = tagTables(data);
  if (tags.length > 0) {
    nav.push(['tags', 'By tag']);
    const skipped =
      data.metrics.skippedTags.length > 0
        ? `<p class="caption">Not broken down (too many distinct values): ${escapeHtml(data.metrics.skippedTags.join(', '))}.</p>`
        : '';
    sections.push(`<h2 id="tags">By tag</h2>${skipped}${tags.map((t) => tableHtml(t)).join('\n')}`);
  }
  nav.push(['items', 'Items']);
  sections.push(`<h2 id="items">Runs per item</h2>
<p class="caption legend">One badge per sample${ui ? ', linking to the run in the Temporal UI' : ''}:
<span class="badge o-faithful">F</span> faithful <span class="badge o-compiled">C</span> compiled, not judged faithful
<span class="badge o-fail">✗</span> Lean rejected it <span class="badge o-refused">R</span> refused by the screen before Lean <span class="badge o-error">T</span> refused for tampering (forged REPL reply) <span class="badge o-error">D</span> refused: Lean could not parse what the screen accepted <span class="badge o-unchecked">?</span> not checked (no Lean)
<span class="badge o-error">!</span> run failed <span class="badge o-fail">B</span> budget exhausted. Hover for details.</p>
${itemsTableHtml(records, data.configs, ui, s.informal)}`);
  if (s.configurations && Object.keys(s.configurations).length > 0) {
    nav.push(['configurations', 'Configurations']);
    const { differ, shared } = configurationTables(s.configurations, data.configs);
    sections.push(
      `<h2 id="configurations">Configurations</h2>${differ ? tableHtml(differ) : ''}${
        // With a differing table above, the shared settings are one click away.
        shared
          ? differ
            ? `<details><summary>${escapeHtml(shared.title)} (${shared.rows.length})</summary>${tableHtml(shared)}</details>`
            : tableHtml(shared)
          : ''
      }`,
    );
  }

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — driftline report</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p class="sub">driftline sweep report · ${escapeHtml(data.configs.length === 1 ? '1 configuration' : `${data.configs.length} configurations`)} · ${data.items} items · ${data.runs} runs</p>
<nav>${nav.map(([id, label]) => `<a href="#${id}">${escapeHtml(label)}</a>`).join('')}</nav>
${sections.join('\n')}
<footer>Also in this directory: report.md, metrics.csv, runs.csv, report.json.</footer>
</main>
</body>
</html>
`;
}
