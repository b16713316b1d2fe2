// The report as Markdown: the same tables as the HTML page (charts left out), for pasting into
// an issue or a paper draft.
import { protocolRows, type ReportData } from './report-data';
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
  type Table,
} from './tables';

function mdEscape(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function tableMarkdown(t: Table, level = 3): string {
  const numeric = new Set(t.numeric ?? []);
  const lines = [
    `${'#'.repeat(level)} ${t.title}`,
    '',
    ...(t.caption ? [t.caption, ''] : []),
    `| ${t.header.map(mdEscape).join(' | ')} |`,
    `| ${t.header.map((_, i) => (numeric.has(i) ? '---:' : '---')).join(' | ')} |`,
    ...t.rows.map((r) => `| ${r.map((c) => mdEscape(cellText(c))).join(' | ')} |`),
    '',
  ];
  return lines.join('\n');
}

export function renderMarkdown(data: ReportData): string {
  const s = data.sweep;
  const out: string[] = [`# ${s.title ?? `Sweep ${s.id}`}`, ''];
  for (const [k, v] of protocolRows(data)) out.push(`- **${k}**: ${v}`);
  for (const n of s.notes ?? []) out.push(`- ${n}`);
  out.push('');
  const found = findings(data);
  if (found.length > 0) out.push('## Findings', '', ...found.map((f) => `- ${f}`), '');
  out.push('## Results', '', tableMarkdown(summaryTable(data)), tableMarkdown(outcomeTable(data)), tableMarkdown(detailTable(data)));
  if (data.judgeAgreement)
    out.push('## Judges side by side', '', ...agreementTables(data.judgeAgreement, data.bootstrap).map((t) => tableMarkdown(t)));
  for (const t of [passAtKTable(data), retrievalTable(data), rankedComparisonsTable(data), comparisonsTable(data), latencyTable(data)])
    if (t) out.push(tableMarkdown(t));
  for (const c of data.repairCurves) {
    out.push(
      `### Repair budget: ${c.config}`,
      '',
      '| rounds | compiles (%) | faithful (%) |',
      '---: | ---: | ---: |'.replace(/^/, '| ').replace(/$/, ' |'),
    );
    for (const p of c.points)
      out.push(`| ${p.budget} | ${(p.compiled * 100).toFixed(1)} | ${p.faithful === null ? '–' : (p.faithful * 100).toFixed(1)} |`);
    out.push('');
  }
  for (const c of data.stepCurves) {
    out.push(`### Step budget: ${c.config}`, '', '| steps | compiles (%) | faithful (%) |', '| ---: | ---: | ---: |');
    for (const p of c.points)
      out.push(`| ${p.budget} | ${(p.compiled * 100).toFixed(1)} | ${p.faithful === null ? '–' : (p.faithful * 100).toFixed(1)} |`);
    out.push('');
  }
  if (data.factorialError) out.push(`No factorial analysis: ${data.factorialError}`, '');
  for (const a of data.factorial) for (const t of factorialTables(a, s.design)) out.push(tableMarkdown(t));
  for (const t of tagTables(data)) out.push(tableMarkdown(t));
  if (s.configurations && Object.keys(s.configurations).length > 0) {
    const { differ, shared } = configurationTables(s.configurations, data.configs);
    out.push('## Configurations', '');
    for (const t of [differ, shared]) if (t) out.push(tableMarkdown(t));
  }
  return out.join('\n');
}
