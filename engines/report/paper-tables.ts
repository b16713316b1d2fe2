// The tables a methods paper prints, from the same report data as the page: configurations ×
// (Typecheck, BEq+, Faithful) @1 and @k with their intervals (the shape of DRIFT's and the
// agent paper's main tables), the ablation differences against a named baseline configuration
// with the paired test's Holm-adjusted p, and the factorial effects. Rendered as LaTeX
// (booktabs `tabular`s, no packages beyond booktabs) or Markdown. Pure.
import type { RateName } from '../metrics/item-outcomes';
import type { FactorialDesign } from '../../common/sweep';
import { pctInterval, ptsInterval, rateLabel } from './format';
import type { ReportData } from './report-data';
import { cellText, factorialTables, type Table } from './tables';

const RATES: readonly RateName[] = ['typecheck', 'beq', 'faithful'];

function pValueText(p: number): string {
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

export function paperTables(data: ReportData, options: { baseline?: string; design?: FactorialDesign } = {}): Table[] {
  const groups = data.metrics.configs;
  const measured = RATES.filter((r) => groups.some((g) => g[r]));
  const k = Math.max(1, ...groups.flatMap((g) => measured.map((r) => g[r]?.k ?? 0)));
  const header = ['Configuration', 'n'];
  for (const rate of measured) {
    header.push(rateLabel(rate, '1'));
    if (k > 1) header.push(rateLabel(rate, 'k', k));
  }
  const main: Table = {
    id: 'paper-main',
    title: 'Results per configuration',
    caption: `Rates in %, 95% intervals over items (Wilson where every item succeeds or fails, else percentile bootstrap, B = ${data.bootstrap.resamples}). n: items.`,
    header,
    rows: groups.map((g) => [
      g.config,
      String(Math.max(0, ...measured.map((r) => g[r]?.items ?? 0))),
      ...measured.flatMap((r) => (k > 1 ? [pctInterval(g[r]?.at1), pctInterval(g[r]?.atK)] : [pctInterval(g[r]?.at1)])),
    ]),
    numeric: header.map((_, i) => i).slice(1),
  };
  const tables = [main];

  const baseline = options.baseline ?? groups[0]?.config;
  if (baseline && groups.length > 1) {
    if (!groups.some((g) => g.config === baseline))
      throw new Error(`no configuration "${baseline}" in this sweep (configurations: ${groups.map((g) => g.config).join(', ')})`);
    const metrics = [
      ...measured.map((r) => `${r}@1` as const),
      ...(data.comparisons.some((c) => c.metric === 'f1') ? (['f1'] as const) : []),
    ];
    const rows = groups
      .filter((g) => g.config !== baseline)
      .map((g) => [
        g.config,
        ...metrics.map((metric) => {
          const c = data.comparisons.find(
            (x) => x.metric === metric && ((x.a === g.config && x.b === baseline) || (x.a === baseline && x.b === g.config)),
          );
          if (!c) return '–';
          // Always configuration minus baseline.
          const sign = c.a === g.config ? 1 : -1;
          const diff = {
            estimate: sign * c.diff.estimate,
            lo: sign * (sign > 0 ? c.diff.lo : c.diff.hi),
            hi: sign * (sign > 0 ? c.diff.hi : c.diff.lo),
          };
          const verdict = c.verdict === 'too-few' ? ' (n too small)' : ` (p = ${pValueText(c.pHolm)})`;
          return `${ptsInterval(diff)}${verdict}`;
        }),
      ]);
    tables.push({
      id: 'paper-ablation',
      title: `Differences against ${baseline}`,
      caption: `Configuration minus ${baseline}, percentage points on the items both ran, 95% paired-bootstrap intervals; p Holm-adjusted (McNemar's exact test for rates, the sign-flip test for F1).`,
      header: ['Configuration', ...metrics.map((m) => (m === 'f1' ? 'Retrieval F1' : rateLabel(m.split('@')[0] as RateName, '1')))],
      rows,
      numeric: metrics.map((_, i) => i + 1),
    });
  }
  for (const analysis of data.factorial) {
    const effects = factorialTables(analysis, options.design)[1]!;
    tables.push({ ...effects, id: `paper-${effects.id}`, title: `Factorial effects on ${analysis.response}` });
  }
  return tables;
}

const LATEX_SPECIALS: Record<string, string> = {
  '\\': '\\textbackslash{}',
  '&': '\\&',
  '%': '\\%',
  $: '\\$',
  '#': '\\#',
  _: '\\_',
  '{': '\\{',
  '}': '\\}',
  '~': '\\textasciitilde{}',
  '^': '\\textasciicircum{}',
  '–': '--',
  '−': '$-$',
  '×': '$\\times$',
  '<': '$<$',
  '>': '$>$',
};

/** Text safe inside a LaTeX table cell: specials escaped, nothing a reader's file could run. */
export function latexText(text: string): string {
  return [...text].map((ch) => LATEX_SPECIALS[ch] ?? ch).join('');
}

export function renderLatexTables(tables: readonly Table[], sweepId: string): string {
  const out = [`% Tables of sweep ${latexText(sweepId)}, written by driftline. Needs \\usepackage{booktabs}.`];
  for (const t of tables) {
    const numeric = new Set(t.numeric ?? []);
    const spec = t.header.map((_, i) => (numeric.has(i) ? 'r' : 'l')).join('');
    out.push(
      '\\begin{table}[t]',
      '\\centering',
      `\\caption{${latexText(t.title)}${t.caption ? `. ${latexText(t.caption)}` : ''}}`,
      `\\label{tab:${t.id.replace(/[^A-Za-z0-9:-]/g, '-')}}`,
      `\\begin{tabular}{${spec}}`,
      '\\toprule',
      `${t.header.map(latexText).join(' & ')} \\\\`,
      '\\midrule',
      ...t.rows.map((row) => `${row.map((c) => latexText(cellText(c))).join(' & ')} \\\\`),
      '\\bottomrule',
      '\\end{tabular}',
      '\\end{table}',
      '',
    );
  }
  return `${out.join('\n')}\n`;
}

export function renderMarkdownTables(tables: readonly Table[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const out: string[] = [];
  for (const t of tables) {
    const numeric = new Set(t.numeric ?? []);
    out.push(`**${t.title}.**${t.caption ? ` ${t.caption}` : ''}`, '');
    out.push(`| ${t.header.map(esc).join(' | ')} |`);
    out.push(`| ${t.header.map((_, i) => (numeric.has(i) ? '---:' : '---')).join(' | ')} |`);
    for (const row of t.rows) out.push(`| ${row.map((c) => esc(cellText(c))).join(' | ')} |`);
    out.push('');
  }
  return `${out.join('\n')}\n`;
}
