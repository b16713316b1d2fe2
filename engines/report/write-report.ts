// The sweep report's entry points. `renderSweepReport` computes everything from the run records
// and returns the files' contents (the API serves them from memory); `writeSweepReport` writes
// them to a directory: index.html (self-contained, offline), report.md, metrics.csv, runs.csv
// and report.json.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { budgetChartSpec, effectsChartSpec, ratesChartSpec, renderSvg, retrievalChartSpec } from './charts';
import { metricsCsv } from './csv';
import { toCsv } from '../results/export';
import { renderHtml } from './html';
import { renderMarkdown } from './markdown';
import { buildReportData, temporalRunUrl, type ReportData, type SweepReportInput } from './report-data';
import { paperTables, renderLatexTables, renderMarkdownTables } from './paper-tables';

export type { SweepReportInput, SweepReportMeta } from './report-data';

export interface RenderedReport {
  data: ReportData;
  html: string;
  markdown: string;
  metricsCsv: string;
  runsCsv: string;
  json: string;
  /** The paper's tables (paper-tables.ts), baseline the first configuration. */
  latex: string;
}

export const REPORT_FILES = {
  html: 'index.html',
  markdown: 'report.md',
  metricsCsv: 'metrics.csv',
  runsCsv: 'runs.csv',
  json: 'report.json',
  latex: 'tables.tex',
} as const;

export async function renderSweepReport(input: SweepReportInput): Promise<RenderedReport> {
  if (input.records.length === 0) throw new Error(`sweep ${input.sweep.id} has no finished runs yet; nothing to report`);
  const data = buildReportData(input);
  const ui = input.temporalUi;
  const svg = async (spec: Parameters<typeof renderSvg>[0] | null) => (spec ? renderSvg(spec) : null);
  const charts = {
    rates: await svg(ratesChartSpec(data)),
    retrieval: await svg(retrievalChartSpec(data)),
    repairBudget: await svg(budgetChartSpec(data, 'repair')),
    stepBudget: await svg(budgetChartSpec(data, 'steps')),
    effects: await Promise.all(data.factorial.map((a) => renderSvg(effectsChartSpec(a)))),
  };
  return {
    data,
    html: renderHtml(data, input.records, charts, ui),
    markdown: renderMarkdown(data),
    metricsCsv: metricsCsv(data),
    runsCsv: toCsv(input.records, runUrlOf(input)),
    json: `${JSON.stringify(data, null, 2)}\n`,
    latex: renderLatexTables(paperTables(data, { ...(input.sweep.design ? { design: input.sweep.design } : {}) }), input.sweep.id),
  };
}

/** The paper's tables alone, against a chosen baseline configuration. */
export function renderPaperTables(input: SweepReportInput, format: 'latex' | 'md', baseline?: string): string {
  if (input.records.length === 0) throw new Error(`sweep ${input.sweep.id} has no finished runs yet; nothing to report`);
  const tables = paperTables(buildReportData(input), {
    ...(baseline ? { baseline } : {}),
    ...(input.sweep.design ? { design: input.sweep.design } : {}),
  });
  return format === 'latex' ? renderLatexTables(tables, input.sweep.id) : renderMarkdownTables(tables);
}

/** Each run's page in the Temporal UI, when the report knows the UI. */
function runUrlOf(input: SweepReportInput): ((workflowId: string) => string) | undefined {
  const ui = input.temporalUi;
  return ui ? (id) => temporalRunUrl(ui.base, ui.namespace, id) : undefined;
}

export type ReportFormat = 'html' | 'md' | 'json' | 'csv';

/** One part of the report, computing only what it needs (charts only for HTML): the API's
 * `GET /v1/sweeps/:id/report` in each of its formats (`csv` is the per-run table). */
export async function renderSweepReportAs(input: SweepReportInput, format: ReportFormat): Promise<string> {
  if (format === 'html') return (await renderSweepReport(input)).html;
  if (input.records.length === 0) throw new Error(`sweep ${input.sweep.id} has no finished runs yet; nothing to report`);
  if (format === 'csv') return toCsv(input.records, runUrlOf(input));
  const data = buildReportData(input);
  return format === 'md' ? renderMarkdown(data) : `${JSON.stringify(data, null, 2)}\n`;
}

/** Writes the report into `outDir` (created if missing); each file is written whole and then
 * renamed into place, so a reader never sees half a report file. Returns the paths written. */
export async function writeSweepReport(outDir: string, input: SweepReportInput): Promise<{ files: string[]; data: ReportData }> {
  const r = await renderSweepReport(input);
  await mkdir(outDir, { recursive: true });
  const files: string[] = [];
  for (const [key, name] of Object.entries(REPORT_FILES) as [keyof typeof REPORT_FILES, string][]) {
    const path = join(outDir, name);
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, r[key]);
    await rename(tmp, path);
    files.push(path);
  }
  return { files, data: r.data };
}
